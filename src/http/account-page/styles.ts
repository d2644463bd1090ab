import { createHash } from 'node:crypto';
import { STYLES } from '../login-page/styles.js';

/**
 * The account page: the login page's stylesheet (same look, colours, focus rings, dark
 * mode) and a few rules of its own for a wider card, sections and the session list.
 */
export const ACCOUNT_STYLES = `${STYLES}
main.wide{max-width:40rem}
h2{font-size:1.15rem;margin:2rem 0 .75rem;font-weight:650}
.notice{background:var(--bg);border:1px solid var(--line);border-radius:8px;padding:.75rem 1rem;
margin:0 0 1.25rem}
.hint{display:block;color:var(--muted);font-size:.85rem;font-weight:400;margin:-.8rem 0 1rem}
nav ul,.sessions{list-style:none;margin:0;padding:0}
nav li{display:inline-block;margin:0 1rem .5rem 0}
.sessions li{border:1px solid var(--line);border-radius:8px;padding:.75rem 1rem;margin:0 0 .75rem}
.sessions p{margin:0 0 .35rem}
.badge{display:inline-block;font-size:.8rem;font-weight:600;border:1px solid var(--accent);
color:var(--accent);border-radius:999px;padding:0 .5rem;margin-left:.5rem}
.check{display:flex;gap:.5rem;align-items:center;font-weight:400}
.check input{width:auto;margin:0}
.inline{margin:.5rem 0 0}
button.secondary{width:auto;background:transparent;color:var(--accent);
border:1px solid var(--line);padding:.4rem .9rem}
button.danger{background:var(--error);color:var(--card)}
`.trim();

/** CSP source expression allowing exactly ACCOUNT_STYLES as an inline `<style>`. */
export const ACCOUNT_STYLES_HASH = `'sha256-${createHash('sha256').update(ACCOUNT_STYLES).digest('base64')}'`;
