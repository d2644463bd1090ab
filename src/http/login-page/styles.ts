import { createHash } from 'node:crypto';

/**
 * The hosted page's whole stylesheet: inline, so the page needs no second request and the
 * CSP can allow exactly this text by its hash and nothing else.
 */
export const STYLES = `
:root{color-scheme:light dark;--bg:#f4f5f7;--card:#fff;--text:#1b1f24;--muted:#5b6470;
--line:#c9ced6;--accent:#2456d6;--accent-text:#fff;--error-bg:#fdecec;--error:#a11d1d}
@media (prefers-color-scheme:dark){:root{--bg:#15181c;--card:#1f2329;--text:#e8eaed;
--muted:#a3abb6;--line:#3a414b;--accent:#6e9bff;--accent-text:#0d1117;--error-bg:#3b1c1c;
--error:#ffb4b4}}
*{box-sizing:border-box}
html{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;
font-size:16px;line-height:1.5;background:var(--bg);color:var(--text)}
body{margin:0;min-height:100vh;display:flex;align-items:center;justify-content:center;padding:1.5rem}
main{width:100%;max-width:24rem;background:var(--card);border:1px solid var(--line);
border-radius:12px;padding:2rem;box-shadow:0 1px 3px rgba(0,0,0,.08)}
h1{font-size:1.5rem;margin:0 0 1.25rem;font-weight:650}
p{margin:0 0 1rem}
.muted{color:var(--muted);font-size:.9rem}
.error{background:var(--error-bg);color:var(--error);border-radius:8px;padding:.75rem 1rem;
margin:0 0 1.25rem;font-size:.95rem}
label{display:block;font-weight:600;margin:0 0 .35rem}
input{display:block;width:100%;font:inherit;color:inherit;background:transparent;
border:1px solid var(--line);border-radius:8px;padding:.6rem .75rem;margin:0 0 1.1rem}
input:focus-visible,button:focus-visible,a:focus-visible{outline:3px solid var(--accent);
outline-offset:2px}
input[aria-invalid=true]{border-color:var(--error)}
button{width:100%;font:inherit;font-weight:600;border:0;border-radius:8px;padding:.7rem 1rem;
background:var(--accent);color:var(--accent-text);cursor:pointer;margin-top:.25rem}
button:hover{filter:brightness(1.08)}
a{color:var(--accent)}
.note{margin:1.25rem 0 0;text-align:center}
h2{font-size:1.15rem;margin:0 0 1rem}
form{margin:0 0 1rem}
button.secondary{background:transparent;color:var(--accent);border:1px solid var(--line)}
details{margin:1rem 0 0}
summary{cursor:pointer;color:var(--accent);margin:0 0 .75rem}
.qr{background:#fff;padding:.5rem;border-radius:8px;max-width:14rem;margin:0 auto 1rem}
.qr svg{display:block;width:100%;height:auto}
code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.key{font-size:1.05rem;word-break:break-all}
ol.codes{columns:2;padding-left:1.5rem;margin:0 0 1rem}
.notice{border-left:3px solid var(--accent);padding-left:.75rem}
.or{text-align:center;color:var(--muted);font-size:.9rem;margin:1.25rem 0 .75rem}
ul.passkeys{list-style:none;padding:0;margin:0 0 1.25rem}
ul.passkeys li{border-top:1px solid var(--line);padding:.75rem 0}
ul.passkeys li:last-child{border-bottom:1px solid var(--line)}
ul.passkeys input{margin:.5rem 0}
.row{display:flex;gap:.5rem}
form.sign-out{display:flex;justify-content:flex-end;margin:-1.25rem -.75rem .25rem 0}
button.link{width:auto;margin:0;padding:.25rem .5rem;background:transparent;color:var(--accent);
font-weight:500;font-size:.9rem;text-decoration:underline}
`.trim();

/** CSP source expression allowing exactly STYLES as an inline `<style>`. */
export const STYLES_HASH = `'sha256-${createHash('sha256').update(STYLES).digest('base64')}'`;
