import { generateSecret, generateURI, verify } from 'otplib';
import type { TotpEngine } from '../domain/second-factor/totp.js';

const PERIOD_SECONDS = 30;
/** One step either way: a phone clock a little off, or a code typed as it changed. */
const TOLERANCE_SECONDS = PERIOD_SECONDS;

/**
 * RFC 6238 with otplib (its default plugins: @noble/hashes HMAC, @scure/base base32;
 * constant-time comparison). Replay protection is ours: the caller passes the last step
 * it accepted and otplib refuses that step and every earlier one (`afterTimeStep`).
 */
export function createOtplibTotp(): TotpEngine {
  return {
    newSecret: () => generateSecret({ length: 20 }),
    uri: ({ issuer, account, secret }) =>
      generateURI({ issuer, label: account, secret, period: PERIOD_SECONDS, digits: 6 }),
    async verify(secret, code, atMs, afterStep) {
      const result = await verify({
        secret,
        token: code,
        epoch: Math.floor(atMs / 1000),
        period: PERIOD_SECONDS,
        epochTolerance: TOLERANCE_SECONDS,
        ...(afterStep === null ? {} : { afterTimeStep: afterStep }),
      });
      return result.valid ? (result as { timeStep: number }).timeStep : null;
    },
  };
}
