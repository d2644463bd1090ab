/**
 * The hosted sign-up page's passkey script (served as /v1/assets/registration-passkey.js;
 * the page's CSP runs no inline script). It needs SimpleWebAuthnBrowser
 * (/v1/assets/webauthn.js). Without WebAuthn, or without JavaScript, the passkey part of
 * the page stays hidden and the password form works as before.
 *
 * The button signs up with the form's username, display name and address and no password:
 * options for the flow, the browser's ceremony, then the registration response, the same
 * JSON calls an operator's own UI makes (docs/registration.md).
 */
export const REGISTRATION_PASSKEY_JS = `'use strict';
(function () {
  var lib = window.SimpleWebAuthnBrowser;
  var root = document.getElementById('passkey-signup');
  var form = document.getElementById('registration');
  if (!lib || !root || !form || !lib.browserSupportsWebAuthn()) return;
  var flow = root.getAttribute('data-flow');
  var csrf = root.getAttribute('data-csrf');
  var button = document.getElementById('passkey-signup-button');
  var status = document.getElementById('passkey-signup-status');
  root.hidden = false;

  function say(text) {
    status.textContent = text;
  }

  async function post(path, body) {
    var res = await fetch('/v1/registration/' + encodeURIComponent(flow) + path, {
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

  function message(answer) {
    var code = answer.body && answer.body.error;
    if (code === 'username_taken') return 'This username is taken. Choose another one.';
    if (code === 'email_taken') return 'This email address belongs to another account. Sign in instead, or use another address.';
    if (code === 'validation_error' && answer.body.message) return answer.body.message;
    if (code === 'rate_limited') return 'Too many attempts. Try again in a moment.';
    if (code === 'invalid_token') return 'This sign-up form has expired or was used. Reload the page.';
    return 'Sign-up with a passkey did not work. Try again.';
  }

  function fields() {
    var body = { csrf_token: csrf };
    for (var name of ['username', 'display_name', 'email']) {
      var value = form.elements[name].value;
      if (value.trim() !== '') body[name] = value;
    }
    return body;
  }

  function signedUp(result) {
    if (result.verification) {
      var target = '/v1/verification?id=' + encodeURIComponent(result.verification.id);
      if (result.return_to) target += '&return_to=' + encodeURIComponent(result.return_to);
      window.location.assign(target);
      return;
    }
    if (result.return_to) {
      window.location.assign(result.return_to);
      return;
    }
    var main = document.querySelector('main');
    var heading = document.createElement('h1');
    heading.textContent = 'Signed in';
    var line = document.createElement('p');
    line.textContent = 'Your account ' + result.identity.username + ' is ready, and you are signed in.';
    main.replaceChildren(heading, line);
    document.title = 'Signed in · Tessera';
  }

  button.addEventListener('click', async function () {
    say('');
    for (var name of ['username', 'email']) {
      if (!form.elements[name].reportValidity()) return;
    }
    var body = fields();
    var issued = await post('/passkey/options', body);
    if (issued.status !== 200) return say(message(issued));
    var credential;
    try {
      credential = await lib.startRegistration({ optionsJSON: issued.body.options });
    } catch (error) {
      return say('No passkey was created. Try again, or choose a password.');
    }
    say('Creating your account…');
    body.credential = credential;
    var answer = await post('/passkey', body);
    if (answer.status === 201) return signedUp(answer.body);
    say(message(answer));
  });
})();
`;
