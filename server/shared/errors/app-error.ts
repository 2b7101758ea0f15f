/**
 * The one error type that crosses a boundary (HTTP response, socket ack, CLI answer).
 * Every code has a fixed meaning; the message is for people.
 */
export const ErrorCode = {
  invalidPayload: "invalid_payload",
  unauthorized: "unauthorized",
  forbidden: "forbidden",
  notFound: "not_found",
  conflict: "conflict",
  rateLimited: "rate_limited",
  alreadyDecided: "already_decided",
  expired: "expired",
  budgetExceeded: "budget_exceeded",
  unavailable: "unavailable",
  cliError: "cli_error",
  internal: "internal",
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** HTTP status for each code, used by route handlers. */
export const httpStatusFor: Record<ErrorCode, number> = {
  invalid_payload: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  rate_limited: 429,
  already_decided: 409,
  expired: 410,
  budget_exceeded: 402,
  unavailable: 503,
  cli_error: 502,
  internal: 500,
};

/** A failure with a stable code and a message fit to show to the person who caused it. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details?: unknown;

  constructor(code: ErrorCode, message: string, details?: unknown) {
    super(message);
    this.name = "AppError";
    this.code = code;
    this.details = details;
  }
}

/** The wire shape of an error, in socket acks and JSON responses. */
export interface WireError {
  code: ErrorCode;
  message: string;
}

/** Turns any thrown value into a wire error; unknown errors never leak their text. */
export function toWireError(err: unknown): WireError {
  if (err instanceof AppError) return { code: err.code, message: err.message };
  return { code: ErrorCode.internal, message: "Something went wrong on the server." };
}
