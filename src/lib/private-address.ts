import { BlockList, isIP } from 'node:net';

/**
 * Addresses a webhook may not reach unless an operator allows it (server-side request
 * forgery): loopback, private, link-local (cloud metadata lives there), shared, unique
 * local, multicast, unspecified and reserved ranges, and IPv4 mapped into IPv6.
 */
const REFUSED = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  REFUSED.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96],
] as const) {
  REFUSED.addSubnet(network, prefix, 'ipv6');
}

/** True for an address a webhook may not reach without SERVICE_WEBHOOK_ALLOW_PRIVATE=on. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return REFUSED.check(address, 'ipv4');
  if (family !== 6) return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return REFUSED.check(mapped[1]!, 'ipv4');
  return REFUSED.check(address, 'ipv6');
}
