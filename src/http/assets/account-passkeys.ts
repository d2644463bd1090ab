/**
 * The account passkeys page's script (served as /v1/assets/account-passkeys.js). It drives
 * the JSON endpoints the page documents for an operator's own UI: options, then the
 * browser's ceremony, then the verified credential; rename and delete. A change refused for
 * want of a recent sign-in sends the browser through the hosted login and back.
 */
export const ACCOUNT_PASSKEYS_JS = `'use strict';
(function () {
  var lib = window.SimpleWebAuthnBrowser;
  var root = document.getElementById('passkeys');
  if (!root) return;
  var csrf = root.getAttribute('data-csrf');
  var reauth = root.getAttribute('data-reauth');
  var status = document.getElementById('passkeys-status');
  var needsJs = document.getElementById('needs-js');
  if (needsJs) needsJs.hidden = true;
  var supported = lib && lib.browserSupportsWebAuthn();
  var add = document.getElementById('add-passkey');
  if (add) add.hidden = !supported;
  if (!supported) {
    status.textContent = 'This browser cannot create passkeys.';
  }
  for (var hidden of document.querySelectorAll('[data-needs-js]')) hidden.hidden = false;

  function say(text) {
    status.textContent = text;
  }

  async function call(method, path, body) {
    var res = await fetch(path, {
      method: method,
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', accept: 'application/json', 'x-csrf-token': csrf },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    var json = null;
    try {
      json = await res.json();
    } catch (ignored) {}
    return { status: res.status, body: json };
  }

  function failed(answer) {
    // 403: the sign-in is no longer recent (or the page is stale): sign in again, come back.
    if (answer.status === 403 && reauth) {
      window.location.assign(reauth);
      return;
    }
    if (answer.status === 401) {
      window.location.reload();
      return;
    }
    say((answer.body && answer.body.message) || 'That did not work. Reload the page and try again.');
  }

  if (add) {
    add.addEventListener('submit', async function (event) {
      event.preventDefault();
      say('');
      var name = document.getElementById('passkey-name').value;
      var options = await call('POST', '/v1/account/passkeys/options', {});
      if (options.status !== 200) return failed(options);
      var credential;
      try {
        credential = await lib.startRegistration({ optionsJSON: options.body.options });
      } catch (error) {
        say(error && error.name === 'InvalidStateError'
          ? 'This device already holds a passkey for your account.'
          : 'No passkey was created.');
        return;
      }
      var body = { credential: credential };
      if (name.trim() !== '') body.name = name;
      var saved = await call('POST', '/v1/account/passkeys', body);
      if (saved.status !== 201) return failed(saved);
      window.location.reload();
    });
  }

  root.addEventListener('click', async function (event) {
    var target = event.target;
    if (!(target instanceof HTMLButtonElement)) return;
    var id = target.getAttribute('data-id');
    if (!id) return;
    var path = '/v1/account/passkeys/' + encodeURIComponent(id);
    var answer;
    if (target.getAttribute('data-action') === 'delete') {
      answer = await call('DELETE', path);
      if (answer.status !== 204) return failed(answer);
    } else if (target.getAttribute('data-action') === 'rename') {
      var input = document.getElementById('name-' + id);
      answer = await call('PATCH', path, { name: input.value });
      if (answer.status !== 200) return failed(answer);
    } else {
      return;
    }
    window.location.reload();
  });
})();
`;
