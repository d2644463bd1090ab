/**
 * A write refused by a uniqueness rule (a taken username, a pair already linked, a service
 * name in use). Part of the store contract: the domain settles races by these rules, never
 * by checking first, so it must be able to tell this refusal from any other failure.
 * Storage adapters translate their drivers' errors into it.
 */
export class UniqueViolation extends Error {
  constructor(override readonly cause: unknown) {
    super('unique constraint violated');
    this.name = 'UniqueViolation';
  }
}
