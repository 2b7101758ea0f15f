// The Messages API's error shape, shared by HTTP error responses and the mid-stream SSE error event.
import type { ApiErrorKind } from "./scenario";

export const ApiErrorType = {
  invalidRequest: "invalid_request_error",
  authentication: "authentication_error",
  notFound: "not_found_error",
  rateLimit: "rate_limit_error",
  api: "api_error",
  overloaded: "overloaded_error",
} as const;
export type ApiErrorType = (typeof ApiErrorType)[keyof typeof ApiErrorType];

export interface ApiErrorBody {
  type: "error";
  error: { type: ApiErrorType; message: string };
  request_id: string;
}

/** HTTP status the real API uses for each error type. */
export const statusForErrorType: Record<ApiErrorType, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  not_found_error: 404,
  rate_limit_error: 429,
  api_error: 500,
  overloaded_error: 529,
};

/** How each scripted error kind presents itself. `midstream` streams 200 first, then an overloaded error event. */
export const errorTypeForKind: Record<ApiErrorKind, ApiErrorType> = {
  rate_limit: "rate_limit_error",
  server: "api_error",
  overloaded: "overloaded_error",
  invalid_request: "invalid_request_error",
  authentication: "authentication_error",
  midstream: "overloaded_error",
};

const defaultMessages: Record<ApiErrorType, string> = {
  invalid_request_error: "Invalid request",
  authentication_error: "invalid x-api-key",
  not_found_error: "Not found",
  rate_limit_error: "Number of request tokens has exceeded your per-minute rate limit",
  api_error: "Internal server error",
  overloaded_error: "Overloaded",
};

/** Builds the JSON error body; `requestId` is echoed in the `request-id` header by the caller. */
export function buildApiError(type: ApiErrorType, requestId: string, message?: string): ApiErrorBody {
  return { type: "error", error: { type, message: message ?? defaultMessages[type] }, request_id: requestId };
}
