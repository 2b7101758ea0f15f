/**
 * Shapes of a past session's transcript page, shared by the web app (which reads them from the
 * database) and the browser (which renders them). Types only.
 */

/** One turn's cost, from the CostEntry rows of its result. */
export interface TranscriptTurnCost {
  resultId: string;
  at: string;
  userName: string;
  model: string;
  usd: number;
  inputTokens: number;
  outputTokens: number;
  durationMs: number;
  isError: boolean;
}

/** An approval of a past session, with who decided it. */
export interface TranscriptApproval {
  id: string;
  toolName: string;
  status: string;
  decidedBy: string | null;
  createdAt: string;
  decidedAt: string | null;
  message: string | null;
}
