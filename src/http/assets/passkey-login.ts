/**
 * The hosted login page's passkey script (served as /v1/assets/passkey-login.js; the page's
 * CSP runs no inline script). It needs SimpleWebAuthnBrowser (/v1/assets/webauthn.js).
 * Without WebAuthn, or without JavaScript, the passkey part of the page stays hidden and the
 * password form works as before.
 *
 * Autofill (conditional mediation) starts at once where the browser offers it: choosing a
 * passkey in the username field's suggestions signs in. The button runs the modal ceremony;
 * the library aborts the autofill request first. Every attempt asks for a fresh challenge.
 */
export const PASSKEY_LOGIN_JS = `'use strict';
(function () {
  var lib = window.SimpleWebAuthnBrowser;
  var root = document.getElementById('passkey');
  if (!lib || !root || !lib.browserSupportsWebAuthn()) return;
  var flow = root.getAttribute('data-flow');
  var csrf = root.getAttribute('data-csrf');
  var button = document.getElementById('passkey-button');
  var status = document.getElementById('passkey-status');
  root.hidden = false;

  function say(text) {
    status.textContent = text;
  }

  async function post(path, body) {
    var res = await fetch('/v1/flows/' + encodeURIComponent(flow) + path, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
    });
    var json = null;
    try {
      json = await res.json();
    } catch (ignored) {}
    return { status: res.status, body: json };
  }

  // Options requests reach the server in the order they were asked for: each replaces the
  // flow's challenge, so the button's must not be overtaken by the autofill's.
  var queue = Promise.resolve();
  function options() {
    var next = queue.then(function () {
      return post('/passkey/options', { csrf_token: csrf });
    });
    queue = next.catch(function () {});
    return next;
  }

  function message(answer) {
    var code = answer.body && answer.body.error;
    if (code === 'invalid_credentials') return 'That passkey is not registered here, or it could not be verified.';
    if (code === 'identity_disabled') return 'This account is disabled. Contact your administrator.';
    // The one refusal of a right passkey from this page: an address not confirmed yet.
    if (code === 'forbidden') return 'Confirm your email address first: open the link in the mail we sent you.';
    if (code === 'rate_limited') return 'Too many attempts. Try again in a moment.';
    if (code === 'invalid_token') return 'This sign-in form has expired or was used. Reload the page.';
    return 'Sign-in with a passkey did not work. Try again.';
  }

  function signedIn(result) {
    if (result.return_to) {
      window.location.assign(result.return_to);
      return;
    }
    var main = document.querySelector('main');
    var heading = document.createElement('h1');
    heading.textContent = 'Signed in';
    var line = document.createElement('p');
    var who = result.session.identity;
    line.textContent = 'You are signed in as ' + who.display_name + ' (' + who.username + ').';
    main.replaceChildren(heading, line);
    document.title = 'Signed in · Tessera';
  }

  async function attempt(autofill) {
    var issued = await options();
    if (issued.status !== 200) {
      say(message(issued));
      return false;
    }
    var credential;
    try {
      credential = await lib.startAuthentication({
        optionsJSON: issued.body.options,
        useBrowserAutofill: autofill,
      });
    } catch (error) {
      // Autofill is aborted whenever the button starts its own ceremony: not an error.
      if (!autofill) say('No passkey was used. Try again, or sign in with your password.');
      return false;
    }
    say('Checking your passkey…');
    var answer = await post('/passkey', { csrf_token: csrf, credential: credential });
    if (answer.status === 200) {
      signedIn(answer.body);
      return true;
    }
    say(message(answer));
    return false;
  }

  async function autofill() {
    if (!(await lib.browserSupportsWebAuthnAutofill())) return;
    await attempt(true);
  }

  button.addEventListener('click', function () {
    say('');
    attempt(false).then(function (done) {
      if (!done) autofill();
    });
  });
  autofill();
})();
`;
