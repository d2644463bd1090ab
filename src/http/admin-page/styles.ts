import { createHash } from 'node:crypto';
import { ACCOUNT_STYLES } from '../account-page/styles.js';

/**
 * The console: the account page's stylesheet (itself the login page's: same look, focus
 * rings, dark mode) and rules for a wider card, the navigation, filter rows and tables.
 */
export const ADMIN_STYLES = `${ACCOUNT_STYLES}
main.console{max-width:72rem}
nav.console ul{display:flex;flex-wrap:wrap;gap:.25rem 1rem}
nav.console a[aria-current=page]{font-weight:700;text-decoration:none}
table{width:100%;border-collapse:collapse;margin:0 0 1rem;font-size:.92rem}
th,td{text-align:left;padding:.4rem .5rem;border-bottom:1px solid var(--line);vertical-align:top}
th{font-weight:650}
td.details{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.8rem;
word-break:break-all}
form.filters{display:flex;flex-wrap:wrap;gap:0 .75rem;align-items:flex-end}
form.filters label{font-size:.85rem}
form.filters input,form.filters select{width:12rem}
form.filters button{width:auto}
select{display:block;font:inherit;color:inherit;background:transparent;border:1px solid var(--line);
border-radius:8px;padding:.55rem .6rem;margin:0 0 1.1rem}
select:focus-visible,textarea:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
textarea{display:block;width:100%;font:inherit;color:inherit;background:transparent;
border:1px solid var(--line);border-radius:8px;padding:.6rem .75rem;margin:0 0 1.1rem}
fieldset{border:1px solid var(--line);border-radius:8px;margin:0 0 1rem}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem;margin:0 0 1rem}
dl.facts dt{font-weight:600}
dl.facts dd{margin:0;word-break:break-all}
.actions form{display:inline-block;margin:0 .5rem .5rem 0}
.actions button{width:auto}
.pages{display:flex;gap:1rem}
figure.chart{margin:0 0 1rem}
figure.chart svg{display:block;width:100%;height:auto;border-left:1px solid var(--line)}
.chart .ok{fill:var(--accent)}
.chart .failed{fill:var(--error)}
.chart .axis{stroke:var(--line)}
.chart text{fill:var(--muted);font-size:11px}
figcaption{color:var(--muted);font-size:.85rem;margin:.35rem 0 0}
.swatch{display:inline-block;width:.8rem;height:.8rem;border-radius:2px;margin:0 .3rem 0 .2rem;
vertical-align:-.05rem}
.swatch.ok{background:var(--accent)}
.swatch.failed{background:var(--error)}
`.trim();

/** CSP source expression allowing exactly ADMIN_STYLES as an inline `<style>`. */
export const ADMIN_STYLES_HASH = `'sha256-${createHash('sha256').update(ADMIN_STYLES).digest('base64')}'`;
