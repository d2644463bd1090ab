import { validationError } from '../errors.js';
import { requireListLimit } from '../list-limit.js';
import { type Identity, type IdentityState, toIdentity } from './identity.js';
import type { IdentityListQuery, IdentityStore } from './identity-store.js';

const STATES: readonly IdentityState[] = ['active', 'disabled'];

export interface IdentityListInput {
  state?: string;
  limit?: number;
}

export function parseIdentityListQuery(input: IdentityListInput): IdentityListQuery {
  const limit = requireListLimit(input.limit);
  const state = input.state as IdentityState | undefined;
  if (state !== undefined && !STATES.includes(state)) {
    throw validationError(`state must be one of: ${STATES.join(', ')}`);
  }
  return state === undefined ? { limit } : { state, limit };
}

/** Newest first. For operators (the CLI): like other operator reads, not audited. */
export async function listIdentities(
  store: Pick<IdentityStore, 'listIdentities'>,
  query: IdentityListQuery,
): Promise<Identity[]> {
  return (await store.listIdentities(query)).map(toIdentity);
}
