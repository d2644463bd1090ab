import { lookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { isPrivateAddress } from '../lib/private-address.js';
import { AddressRefused, type WebhookTransport } from '../domain/webhooks/webhook-transport.js';

/** A receiver gets this long to answer; past it the attempt fails and is retried. */
export const WEBHOOK_TIMEOUT_MS = 10_000;

function parse(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new AddressRefused('not_http', 'the URL is not a valid absolute URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new AddressRefused('not_http', 'the URL must be http:// or https://');
  }
  // The URL is listed and audited as written: a password in it would be shown to every
  // operator. The signature is what proves to the receiver that Tessera sent the event.
  if (parsed.username !== '' || parsed.password !== '') {
    throw new AddressRefused(
      'credentials',
      'the URL must not carry a user name or password (the webhook signature authenticates Tessera)',
    );
  }
  return parsed;
}

function refusal(address: string): AddressRefused {
  return new AddressRefused(
    'private_address',
    `${address} is a loopback, private or reserved address (SERVICE_WEBHOOK_ALLOW_PRIVATE=on allows it)`,
  );
}

/** The URL's host without IPv6 brackets. */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/**
 * Webhooks over node:http(s), signed with the standardwebhooks package. The connection's own DNS lookup is the one checked, so the
 * address checked is the address connected to; a literal address is checked directly.
 */
export function httpWebhookTransport(allowPrivate: boolean): WebhookTransport {
  const guardedLookup: LookupFunction = (hostname, options, callback) => {
    lookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 0);
      const refused = addresses.find((entry) => isPrivateAddress(entry.address));
      if (refused && !allowPrivate) return callback(refusal(refused.address), '', 0);
      if (options.all) return callback(null, addresses as never);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };

  async function check(url: string): Promise<void> {
    const host = hostOf(parse(url));
    if (allowPrivate) return;
    if (isIP(host) !== 0) {
      if (isPrivateAddress(host)) throw refusal(host);
      return;
    }
    const addresses = await new Promise<LookupAddress[]>((resolve, reject) =>
      lookup(host, { all: true }, (error, found) => (error ? reject(error) : resolve(found))),
    ).catch(() => {
      throw new AddressRefused('unresolvable', `${host} does not resolve`);
    });
    const refused = addresses.find((entry) => isPrivateAddress(entry.address));
    if (refused) throw refusal(refused.address);
  }

  return {
    check,
    async post(url, message) {
      const body = message.body;
      const headers = {
        'content-type': 'application/json',
        'user-agent': 'Tessera-Webhooks',
        'webhook-id': message.id,
        'webhook-timestamp': String(Math.floor(message.at.getTime() / 1000)),
        // The standardwebhooks package signs: `v1,` and the HMAC-SHA256 of id.timestamp.body.
        'webhook-signature': new Webhook(message.secret).sign(message.id, message.at, body),
      };
      const parsed = parse(url);
      const host = hostOf(parsed);
      if (!allowPrivate && isIP(host) !== 0 && isPrivateAddress(host)) throw refusal(host);
      const options: RequestOptions = {
        method: 'POST',
        headers: { ...headers, 'content-length': Buffer.byteLength(body) },
        lookup: guardedLookup,
        timeout: WEBHOOK_TIMEOUT_MS,
        agent: false,
      };
      const send = parsed.protocol === 'https:' ? httpsRequest : httpRequest;
      return new Promise<number>((resolve, reject) => {
        const req = send(parsed, options, (res) => {
          // Only the status counts: the body is never read, so a receiver cannot hold the
          // worker by streaming one (the connection is not reused: agent false).
          resolve(res.statusCode ?? 0);
          res.destroy();
        });
        req.on('timeout', () => req.destroy(new Error('the receiver did not answer in time')));
        req.on('error', reject);
        req.end(body);
      });
    },
  };
}
