export type FlowState = 'created' | 'completed' | 'failed';

export interface FlowRecord {
  id: string;
  csrf_token: string;
  return_to: string | null;
  state: FlowState;
  failed_attempts: number;
  issued_at: number;
  expires_at: number;
}

/** A recorded failure of a flow submission, kept so a UI can show it after a reload. */
export interface FlowErrorRecord {
  flow_id: string;
  at: number;
  error: string;
}
