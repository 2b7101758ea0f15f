/** Helpers shared by the route handlers: one error funnel, one body parser. */
import { describeIssue } from "@/server/web/validation-message";
import type { z } from "zod";
import { AppError, ErrorCode, httpStatusFor, toWireError } from "@/server/shared/errors/app-error";
import { logger } from "@/server/web/logger";
import { observeRouteHandler } from "@/server/web/web-metrics";

/** A JSON response for a thrown value; unknown errors are logged and reported as internal. */
export function errorResponse(err: unknown): Response {
  if (!(err instanceof AppError)) logger.error({ err }, "unhandled error in route handler");
  const wire = toWireError(err);
  return Response.json({ error: wire }, { status: httpStatusFor[wire.code] });
}

/** Runs a handler, turning any thrown error into its JSON response. */
export async function handle(fn: () => Promise<Response>): Promise<Response> {
  const started = performance.now();
  let res: Response;
  try {
    res = await fn();
  } catch (err) {
    res = errorResponse(err);
  }
  observeRouteHandler(res.status, (performance.now() - started) / 1000);
  return res;
}

/** Parses a JSON request body against a schema; a mismatch is an `invalid_payload` error. */
export async function readBody<T extends z.ZodType>(req: Request, schema: T): Promise<z.infer<T>> {
  let raw: unknown;
  try {
    raw = await req.json();
  } catch {
    throw new AppError(ErrorCode.invalidPayload, "The request body must be JSON.");
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    // in people's words, never zod's ("monthlyBudgetUsd: Too big: expected number to be <=1000000")
    throw new AppError(ErrorCode.invalidPayload, describeIssue(parsed.error.issues[0]));
  }
  return parsed.data;
}
