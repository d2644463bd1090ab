/**
 * The sign-out control of every hosted page a signed-in user sees: one plain form posting
 * to `POST /v1/logout`, so it works with JavaScript off and under the pages' CSP
 * (`form-action 'self'`). It needs no CSRF token: logout refuses a foreign `Origin`, the
 * browser sends ours on this same-origin post (the pages' `Referrer-Policy: same-origin`
 * keeps it from being `null`), and the worst a forged logout can do is sign the user out.
 * `?page=signed-out` asks for the "Signed out" page instead of the 204 (browser-session.ts).
 */
export function signOutForm(): string {
  return `<form class="sign-out" method="post" action="/v1/logout?page=signed-out">
<button type="submit" class="link">Sign out</button>
</form>`;
}
