/**
 * How the sidecar's helper process (`spawn-helper.ts`) is
 * started (a plain-JavaScript child over IPC, without tsx, its environment `PATH` alone) and how it
 * is kept from holding the sidecar open.
 */
import { fork, type ChildProcess, type SerializationType } from "node:child_process";

/** Forks `script` as a helper; its `pid` is undefined when it could not start (its 'error' follows). */
export function forkHelper(
  script: string,
  options: { execPath?: string | undefined; serialization?: SerializationType } = {},
): ChildProcess {
  return fork(script, [], {
    ...(options.serialization ? { serialization: options.serialization } : {}),
    stdio: ["ignore", "ignore", "inherit", "ipc"],
    env: { NODE_ENV: "production", PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin" },
    execArgv: [],
    ...(options.execPath ? { execPath: options.execPath } : {}),
  });
}

/** Whether the helper (its process and its IPC channel) keeps the sidecar's loop alive. */
export function holdOpen(helper: ChildProcess, held: boolean): void {
  if (held) {
    helper.ref();
    helper.channel?.ref();
  } else {
    helper.unref();
    helper.channel?.unref();
  }
}
