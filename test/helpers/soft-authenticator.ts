import {
  type KeyObject,
  createHash,
  createPublicKey,
  generateKeyPairSync,
  randomBytes,
  sign,
} from 'node:crypto';

/**
 * A software WebAuthn authenticator for API-level tests: a P-256 key per credential, "none"
 * attestation, and assertions signed like a platform authenticator's (user present and
 * verified). The browser part (clientDataJSON with origin and challenge) is made here too,
 * so a test can claim another origin, answer another challenge or replay an assertion.
 */

type Cbor = number | Uint8Array | string | Map<Cbor, Cbor> | Cbor[];

function head(major: number, length: number): number[] {
  if (length < 24) return [(major << 5) | length];
  if (length < 256) return [(major << 5) | 24, length];
  return [(major << 5) | 25, length >> 8, length & 0xff];
}

function cbor(value: Cbor): Buffer {
  if (typeof value === 'number') {
    return Buffer.from(value >= 0 ? head(0, value) : head(1, -1 - value));
  }
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8');
    return Buffer.concat([Buffer.from(head(3, bytes.length)), bytes]);
  }
  if (value instanceof Uint8Array)
    return Buffer.concat([Buffer.from(head(2, value.length)), value]);
  if (Array.isArray(value)) {
    return Buffer.concat([Buffer.from(head(4, value.length)), ...value.map(cbor)]);
  }
  const parts: Buffer[] = [Buffer.from(head(5, value.size))];
  for (const [key, item] of value) parts.push(cbor(key), cbor(item));
  return Buffer.concat(parts);
}

const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest();
const b64 = (data: Uint8Array | string) => Buffer.from(data).toString('base64url');

const UP = 0x01;
const UV = 0x04;
const BE = 0x08;
const BS = 0x10;
const AT = 0x40;

export interface SoftCredential {
  id: Buffer;
  privateKey: KeyObject;
  userHandle: string;
  counter: number;
}

export interface Ceremony {
  origin: string;
  /** Defaults to the options' rpId (or rp.id). */
  rpId?: string;
  /** Answer this challenge instead of the options' own. */
  challenge?: string;
  userVerified?: boolean;
  /** A synced passkey: backup eligible and backed up. */
  backedUp?: boolean;
  /** Registration only: register this existing credential again instead of a new one. */
  reuse?: SoftCredential;
}

function authData(rpId: string, flags: number, counter: number, attested?: Buffer): Buffer {
  const count = Buffer.alloc(4);
  count.writeUInt32BE(counter);
  return Buffer.concat([
    sha256(rpId),
    Buffer.from([flags]),
    count,
    ...(attested ? [attested] : []),
  ]);
}

function flagsOf(ceremony: Ceremony): number {
  return UP | (ceremony.userVerified === false ? 0 : UV) | (ceremony.backedUp ? BE | BS : 0);
}

export class SoftAuthenticator {
  readonly credentials: SoftCredential[] = [];

  /** navigator.credentials.create(), as JSON: a new discoverable credential. */
  register(options: Record<string, unknown>, ceremony: Ceremony): Record<string, unknown> {
    const rp = options.rp as { id: string };
    const user = options.user as { id: string };
    const rpId = ceremony.rpId ?? rp.id;
    const { privateKey, publicKey } = ceremony.reuse
      ? {
          privateKey: ceremony.reuse.privateKey,
          publicKey: createPublicKey(ceremony.reuse.privateKey),
        }
      : generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' });
    const cose = cbor(
      new Map<Cbor, Cbor>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, Buffer.from(jwk.x!, 'base64url')],
        [-3, Buffer.from(jwk.y!, 'base64url')],
      ]),
    );
    const id = ceremony.reuse?.id ?? randomBytes(16);
    const length = Buffer.alloc(2);
    length.writeUInt16BE(id.length);
    const attested = Buffer.concat([Buffer.alloc(16), length, id, cose]);
    const data = authData(rpId, flagsOf(ceremony) | AT, 0, attested);
    const clientData = JSON.stringify({
      type: 'webauthn.create',
      challenge: ceremony.challenge ?? (options.challenge as string),
      origin: ceremony.origin,
      crossOrigin: false,
    });
    const attestation = cbor(
      new Map<Cbor, Cbor>([
        ['fmt', 'none'],
        ['attStmt', new Map()],
        ['authData', data],
      ]),
    );
    if (!ceremony.reuse) this.credentials.push({ id, privateKey, userHandle: user.id, counter: 0 });
    return {
      id: b64(id),
      rawId: b64(id),
      type: 'public-key',
      response: {
        clientDataJSON: b64(clientData),
        attestationObject: b64(attestation),
        transports: ['internal'],
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }

  /** navigator.credentials.get(), as JSON, with a credential of this authenticator. */
  assert(
    options: Record<string, unknown>,
    ceremony: Ceremony,
    credential: SoftCredential = this.credentials[0]!,
  ): Record<string, unknown> {
    const rpId = ceremony.rpId ?? (options.rpId as string);
    credential.counter += 1;
    const data = authData(rpId, flagsOf(ceremony), credential.counter);
    const clientData = JSON.stringify({
      type: 'webauthn.get',
      challenge: ceremony.challenge ?? (options.challenge as string),
      origin: ceremony.origin,
      crossOrigin: false,
    });
    const signature = sign(
      'sha256',
      Buffer.concat([data, sha256(clientData)]),
      credential.privateKey,
    );
    return {
      id: b64(credential.id),
      rawId: b64(credential.id),
      type: 'public-key',
      response: {
        clientDataJSON: b64(clientData),
        authenticatorData: b64(data),
        signature: b64(signature),
        userHandle: credential.userHandle,
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }
}
