/** Why a webhook URL may not be used: a typed reason, never a matched message. */
export type AddressRefusal = 'not_http' | 'credentials' | 'private_address' | 'unresolvable';

export class AddressRefused extends Error {
  constructor(
    readonly reason: AddressRefusal,
    message: string,
  ) {
    super(message);
    this.name = 'AddressRefused';
  }
}

/**
 * How webhooks reach their receivers (adapters/webhook-http.ts). Both calls resolve the
 * host and refuse private addresses unless allowed: at creation, and again at each
 * delivery, on the very address connected to (a name that resolves elsewhere later,
 * DNS rebinding, is refused then).
 */
export interface WebhookTransport {
  /** Throws AddressRefused when the URL may not be used. */
  check(url: string): Promise<void>;
  /**
   * POSTs the message, signed by the Standard Webhooks specification (`webhook-id`,
   * `webhook-timestamp`, `webhook-signature`), and resolves with the answer's status; never
   * follows a redirect. Throws AddressRefused, or any other error for a failure to connect
   * or a timeout.
   */
  post(url: string, message: SignedMessage): Promise<number>;
}

export interface SignedMessage {
  /** `webhook-id`: the same on every attempt of one delivery. */
  id: string;
  /** `webhook-timestamp`: this attempt's. */
  at: Date;
  /** The JSON body, posted exactly as signed. */
  body: string;
  /** The webhook's `whsec_...` secret. */
  secret: string;
}
