import { isIP } from 'node:net';
import type { FastifyRequest } from 'fastify';
import { type SessionDevice, sessionDevice } from '../domain/sessions/session.js';
import type { ServiceCaller } from '../domain/service-tokens/service-token.js';
import { CLIENT_IP_HEADER } from './client-address.js';

/** The end user's User-Agent, as a service signing them in may state it. */
export const CLIENT_USER_AGENT_HEADER = 'x-service-client-user-agent';

/**
 * A browser endpoint's sign-in: the address its limits use, and the browser's User-Agent.
 * Behind a browser_proxy that stated the address, the proxy's stated user agent is the
 * browser's, when it sends one.
 */
export function browserDevice(request: FastifyRequest, address: string): SessionDevice {
  const proxied = request.headers[CLIENT_IP_HEADER] !== undefined;
  const stated = proxied ? request.headers[CLIENT_USER_AGENT_HEADER] : undefined;
  return sessionDevice(stated ?? request.headers['user-agent'], address);
}

/**
 * A service endpoint's sign-in (direct auth, link sign-in): the request comes from the
 * service, not the user's device, so its own User-Agent and peer address say nothing about
 * the user. What the service states is recorded instead: `X-Service-Client-User-Agent`, and
 * `X-Service-Client-Ip` under the rule of client-address.ts (a browser_proxy caller only).
 * A stated address from any other caller is left alone here, as these endpoints always did;
 * `/v1/authenticate/password` has refused it before this is reached. Unstated means null.
 */
export function statedDevice(request: FastifyRequest, caller: ServiceCaller | null): SessionDevice {
  const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);
  const stated = first(request.headers[CLIENT_IP_HEADER])?.trim();
  const trusted = caller?.grants.has('browser_proxy') === true;
  const address = trusted && stated && isIP(stated) !== 0 ? stated : null;
  return sessionDevice(first(request.headers[CLIENT_USER_AGENT_HEADER]), address);
}
