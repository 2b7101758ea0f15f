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
  return (...args: unknown[]) => {
    const ack = typeof args[args.length - 1] === "function" ? (args.pop() as (a: Ack<R>) => void) : undefined;
    const reply = (a: Ack<R>) => ack?.(a);
    const parsed = schema.safeParse(args[0]);
    if (!parsed.success) {
      const first = parsed.error.issues[0];
      const where = first && first.path.length > 0 ? `${first.path.join(".")}: ` : "";
      reply({ ok: false, error: { code: ErrorCode.invalidPayload, message: `${where}${first?.message ?? "invalid payload"}` } });
      return;
    }
    run(parsed.data).then(
      (data) => reply({ ok: true, data }),
      (err: unknown) => {
        if (!(err instanceof AppError)) log.error({ err }, "socket command failed");
        reply({ ok: false, error: toWireError(err) });
      },
    );
  };
}
