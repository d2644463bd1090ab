import { validationError } from './errors.js';

export const DEFAULT_LIST_LIMIT = 50;
export const MAX_LIST_LIMIT = 10_000;

/** How many rows a list may ask for: a whole number from 1 to MAX_LIST_LIMIT. */
export function requireListLimit(limit: number | undefined): number {
  if (limit === undefined) return DEFAULT_LIST_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT) {
    throw validationError(`limit must be an integer from 1 to ${MAX_LIST_LIMIT}`);
  }
  return limit;
}
