/**
 * The sign-out control of every hosted page a signed-in user sees: one plain form posting
 * to `POST /v1/logout`, so it works with JavaScript off and under the pages' CSP
 * (`form-action 'self'`). It needs no CSRF token: logout refuses a foreign `Origin`, the
 * browser sends ours on this same-origin post (the pages' `Referrer-Policy: same-origin`
 * keeps it from being `null`), and the worst a forged logout can do is sign the user out.
 * A navigating form post is answered with the "Signed out" page (browser-session.ts).
 */
export function signOutForm(): string {
  return `<form class="sign-out" method="post" action="/v1/logout">
<button type="submit" class="link">Sign out</button>
</form>`;
}
