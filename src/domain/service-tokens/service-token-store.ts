import type { ServiceTokenRecord } from './service-token.js';

/** Grants are written once at insert; there is deliberately no update method. */
export interface ServiceTokenStore {
  insertServiceToken(record: ServiceTokenRecord): Promise<void>;
  findServiceTokenByHash(tokenHash: string): Promise<ServiceTokenRecord | undefined>;
  findServiceTokenByIdOrName(idOrName: string): Promise<ServiceTokenRecord | undefined>;
  listServiceTokens(): Promise<ServiceTokenRecord[]>;
  revokeServiceToken(id: string, at: number): Promise<void>;
}
