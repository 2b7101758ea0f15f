/**
 * Every socket command is acknowledged with exactly one of these shapes.
 */
import type { WireError } from "@/server/shared/errors/app-error";

/** A successful acknowledgement carrying the command's result. */
export interface AckOk<T> {
  ok: true;
  data: T;
}

/** A failed acknowledgement; `error.code` is one of the AppError codes. */
export interface AckErr {
  ok: false;
  error: WireError;
}

/** The acknowledgement of a socket command. */
export type Ack<T> = AckOk<T> | AckErr;
