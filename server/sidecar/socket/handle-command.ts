/**
 * One funnel for socket commands: validate the payload, run the handler, acknowledge with
 * `{ok:true,data}` or `{ok:false,error}`. A bad payload never reaches a handler, a thrown
 * error never escapes, and the socket stays usable either way.
 */
import type { Logger } from "pino";
import type { Socket } from "socket.io";
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

/** Commands one socket may have running at once; more are answered `rate_limited` at once. */
export const maxCommandsInFlight = 8;

const limited = new WeakSet<Socket>();

/**
 * Bounds the work one socket can start: at most `max` commands between their arrival and
 * their acknowledgement. Every command goes through the funnel above, which always acks, so
 * the ack is where a slot frees; a command sent without an ack gets one that only frees its
 * slot. Events nobody handles take no slot (nothing runs). Installed once per socket, for
 * every handler registered on it, whoever registers them.
 */
export function limitCommandsInFlight(socket: Socket, log: Logger, max: number = maxCommandsInFlight): void {
  if (limited.has(socket)) return;
  limited.add(socket);
  let inFlight = 0;
  socket.use((packet, next) => {
    const [name] = packet;
    if (typeof name !== "string" || socket.listeners(name).length === 0) return next();
    const last = packet[packet.length - 1];
    const ack = typeof last === "function" ? (last as (reply: Ack<never>) => void) : undefined;
    if (inFlight >= max) {
      log.warn({ socketId: socket.id, command: name, inFlight }, "socket command refused: too many in flight");
      ack?.({
        ok: false,
        error: {
          code: ErrorCode.rateLimited,
          message: `Too many requests at once from this tab (at most ${max} may run together). Wait for the others to finish and try again.`,
        },
      });
      return;
    }
    inFlight += 1;
    let released = false;
    const release = (...reply: unknown[]) => {
      if (!released) {
        released = true;
        inFlight -= 1;
      }
      (ack as ((...a: unknown[]) => void) | undefined)?.(...reply);
    };
    if (ack) packet[packet.length - 1] = release;
    else packet.push(release);
    next();
  });
}
