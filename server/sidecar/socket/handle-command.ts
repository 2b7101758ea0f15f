/**
 * One funnel for socket commands: validate the payload, run the handler, acknowledge with
 * `{ok:true,data}` or `{ok:false,error}`. A bad payload never reaches a handler, a thrown
 * error never escapes, and the socket stays usable either way.
 */
import type { Logger } from "pino";
import type { z } from "zod";
import { AppError, ErrorCode, toWireError } from "@/server/shared/errors/app-error";
import type { Ack } from "@/server/shared/wire/ack";

export function handleCommand<S extends z.ZodType, R>(
  schema: S,
  run: (payload: z.infer<S>) => Promise<R>,
  log: Logger,
): (...args: unknown[]) => void {
  return handleCommandWithReply<S, R>(schema, async (payload, reply) => reply(await run(payload)), log);
}

/**
 * The funnel for a handler that must acknowledge at a precise moment rather than when it
 * returns (a subscribe acks in the same tick as it joins the room, so no live event can
 * overtake the snapshot). `reply` sends the success ack; a rejection sends the error ack;
 * a handler that returns without replying is a bug, answered with `internal`.
 */
export function handleCommandWithReply<S extends z.ZodType, R>(
  schema: S,
  run: (payload: z.infer<S>, reply: (data: R) => void) => Promise<void>,
  log: Logger,
): (...args: unknown[]) => void {
  return (...args: unknown[]) => {
    const ack = typeof args[args.length - 1] === "function" ? (args.pop() as (a: Ack<R>) => void) : undefined;
    let replied = false;
    const reply = (a: Ack<R>) => {
      if (replied) return;
      replied = true;
      ack?.(a);
    };
    const parsed = schema.safeParse(args[0]);
    if (!parsed.success) {
      const first = parsed.error.issues[0];
      const where = first && first.path.length > 0 ? `${first.path.join(".")}: ` : "";
      reply({ ok: false, error: { code: ErrorCode.invalidPayload, message: `${where}${first?.message ?? "invalid payload"}` } });
      return;
    }
    let running: Promise<void>;
    try {
      running = run(parsed.data, (data) => reply({ ok: true, data }));
    } catch (err) {
      running = Promise.reject(err);
    }
    running.then(
      () => {
        if (replied) return;
        log.error("socket command finished without replying");
        reply({ ok: false, error: toWireError(undefined) });
      },
      (err: unknown) => {
        if (!(err instanceof AppError)) log.error({ err }, "socket command failed");
        reply({ ok: false, error: toWireError(err) });
      },
    );
  };
}
