/**
 * Why a provider's callback signed nobody in (or connected nothing), for the page's
 * sentence and the flow's record; the upstream's own failures are `UpstreamFailure`s.
 *
 * - `state_invalid`: no authorization request of this state was started in this browser
 *   (a replayed callback, one from another browser, a forged or expired state);
 * - `not_registered`: an account no identity is linked to, and registration is closed;
 * - `email_taken`: a new identity would take an address another identity has (an identity
 *   is never linked by its address: the owner connects the provider from the account page);
 * - `conflict`: another sign-in took the name or the account meanwhile (try again);
 * - `linked_elsewhere`: connecting an account that another identity holds;
 * - `not_signed_in`: a connection's callback in a browser no longer signed in as the
 *   identity that started it.
 */
export type ProviderRefusalReason =
  | 'state_invalid'
  | 'not_registered'
  | 'email_taken'
  | 'conflict'
  | 'linked_elsewhere'
  | 'not_signed_in';

export class ProviderRefusal extends Error {
  constructor(readonly reason: ProviderRefusalReason) {
    super(reason);
    this.name = 'ProviderRefusal';
  }
}
