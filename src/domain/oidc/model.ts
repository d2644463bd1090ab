/**
 * One stored provider model: the provider's own JSON payload, plus the columns its adapter
 * looks rows up by. `kind` is the provider's model name (AuthorizationCode, Session, ...).
 */
export interface OidcModelRecord {
  kind: string;
  id: string;
  payload: string;
  grant_id: string | null;
  client_id: string | null;
  uid: string | null;
  user_code: string | null;
  consumed_at: number | null;
  expires_at: number;
}
