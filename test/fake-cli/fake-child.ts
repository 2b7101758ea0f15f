// An in-memory stand-in for a spawned `claude` child, for unit tests of the process layer and the
// session runner: synchronous pipes, scripted reactions to stdin and signals, and a record of
// every spawn and every signal with the (fake) time it happened.
import { EventEmitter } from "node:events";
import type {
  ChildLike,
  ChildReadable,
  ChildStdin,
  KillGroup,
  SpawnFunction,
} from "@/server/sidecar/process/cli-process";

/** How a fake child reacts. */
export interface FakeChildBehaviour {
  /** On stdin end: exit 0 (the real CLI, idle) or keep running. Default "exit". */
  onStdinEnd?: "exit" | "ignore";
  /** On SIGTERM to the group: exit (143-style, signal SIGTERM) or ignore. Default "exit". */
  onSigterm?: "exit" | "ignore";
  /** Called with every line written to stdin, parsed. */
  onLine?: (message: Record<string, unknown>, child: FakeChild) => void;
  /** Fail the spawn with this error (ENOENT and the like). */
  spawnError?: Error;
}

class FakeReadable extends EventEmitter implements ChildReadable {
  closed = false;
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.emit("close");
  }
}

class FakeStdin extends EventEmitter implements ChildStdin {
  destroyed = false;
  writableEnded = false;
  constructor(private readonly child: FakeChild) {
    super();
  }
  write(chunk: string): boolean {
    if (this.destroyed || this.writableEnded) throw new Error("write after end");
    this.child.received(chunk);
    return true;
  }
  end(): void {
    if (this.writableEnded) return;
    this.writableEnded = true;
    this.child.stdinEnded();
  }
}

/** One fake child process. */
export class FakeChild extends EventEmitter implements ChildLike {
  readonly stdin: FakeStdin;
  readonly stdout = new FakeReadable();
  readonly stderr = new FakeReadable();
  /** Every stdin line, parsed, in order. */
  readonly lines: Record<string, unknown>[] = [];
  exitStatus: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private partial = "";

  constructor(
    readonly pid: number,
    readonly file: string,
    readonly args: readonly string[],
    readonly options: { cwd: string; env: Record<string, string> },
    readonly behaviour: FakeChildBehaviour,
  ) {
    super();
    this.stdin = new FakeStdin(this);
  }

  get exited(): boolean {
    return this.exitStatus !== undefined;
  }

  /** Prints one stdout line (an object is JSON-encoded). */
  print(message: Record<string, unknown> | string): void {
    const text = typeof message === "string" ? message : JSON.stringify(message);
    this.stdout.emit("data", Buffer.from(`${text}\n`));
  }

  printRaw(text: string): void {
    this.stdout.emit("data", Buffer.from(text));
  }

  printStderr(text: string): void {
    this.stderr.emit("data", Buffer.from(text));
  }

  /** Ends the process: exit event, then the pipes close (as Node orders them). */
  exit(code: number | null, signal: NodeJS.Signals | null = null): void {
    if (this.exitStatus !== undefined) return;
    this.exitStatus = { code, signal };
    this.emit("exit", code, signal);
    this.stdout.close();
    this.stderr.close();
  }

  /** Breaks stdin as a dead reader would (EPIPE). */
  breakStdin(): void {
    this.stdin.destroyed = true;
    this.stdin.emit("error", Object.assign(new Error("write EPIPE"), { code: "EPIPE" }));
  }

  /** The control requests written to stdin with this subtype. */
  controlRequests(subtype?: string): Record<string, unknown>[] {
    return this.lines.filter(
      (line) =>
        line.type === "control_request" &&
        (subtype === undefined || (line.request as { subtype?: string }).subtype === subtype),
    );
  }

  /** Answers a host control request with success. */
  answer(request: Record<string, unknown>, response: Record<string, unknown> = {}): void {
    this.print({
      type: "control_response",
      response: { subtype: "success", request_id: request.request_id, response },
    });
  }

  /** @internal */
  received(chunk: string): void {
    const text = this.partial + chunk;
    const parts = text.split("\n");
    this.partial = parts.pop() ?? "";
    for (const part of parts) {
      if (part === "") continue;
      const message = JSON.parse(part) as Record<string, unknown>;
      this.lines.push(message);
      this.behaviour.onLine?.(message, this);
    }
  }

  /** @internal */
  stdinEnded(): void {
    if ((this.behaviour.onStdinEnd ?? "exit") === "exit") queueMicrotask(() => this.exit(0));
  }

  /** @internal */
  signalled(signal: NodeJS.Signals): void {
    if (this.exited) return;
    if (signal === "SIGKILL") this.exit(null, "SIGKILL");
    else if (signal === "SIGTERM" && (this.behaviour.onSigterm ?? "exit") === "exit") this.exit(null, "SIGTERM");
  }
}

/** A spawn function and group killer over fake children. */
export interface FakeSpawner {
  spawn: SpawnFunction;
  killGroup: KillGroup;
  children: FakeChild[];
  /** Every signal sent, with `Date.now()` at the time (fake timers make that exact). */
  signals: Array<{ pid: number; signal: NodeJS.Signals; at: number }>;
  /** Spawn times, `Date.now()`. */
  spawnedAt: number[];
  /** The newest child. */
  readonly last: FakeChild;
}

/** Creates fake children; `behaviour` may depend on the spawn's index (0 = first). */
export function createFakeSpawner(
  behaviour: FakeChildBehaviour | ((index: number) => FakeChildBehaviour) = {},
  firstPid = 4000,
): FakeSpawner {
  const children: FakeChild[] = [];
  const signals: FakeSpawner["signals"] = [];
  const spawnedAt: number[] = [];
  return {
    children,
    signals,
    spawnedAt,
    get last() {
      const child = children.at(-1);
      if (child === undefined) throw new Error("nothing spawned yet");
      return child;
    },
    spawn(file, args, options) {
      const index = children.length;
      const chosen = typeof behaviour === "function" ? behaviour(index) : behaviour;
      const child = new FakeChild(firstPid + index, file, args, options, chosen);
      children.push(child);
      spawnedAt.push(Date.now());
      queueMicrotask(() => {
        if (chosen.spawnError !== undefined) child.emit("error", chosen.spawnError);
        else child.emit("spawn");
      });
      return child;
    },
    killGroup(pid, signal) {
      signals.push({ pid, signal, at: Date.now() });
      children.find((child) => child.pid === pid)?.signalled(signal);
    },
  };
}

/** Stdout frames of a minimal turn, shaped like the real CLI's. */
export const frames = {
  init(sessionId: string, permissionMode = "default"): Record<string, unknown> {
    return {
      type: "system",
      subtype: "init",
      session_id: sessionId,
      model: "claude-opus-5-5",
      permissionMode,
      cwd: "/ws",
      tools: [],
    };
  },
  assistant(sessionId: string, text: string): Record<string, unknown> {
    return {
      type: "assistant",
      message: { id: "msg_1", type: "message", role: "assistant", content: [{ type: "text", text }] },
      parent_tool_use_id: null,
      session_id: sessionId,
    };
  },
  result(sessionId: string, uuids: string[] = [], extra: Record<string, unknown> = {}): Record<string, unknown> {
    return {
      type: "result",
      subtype: "success",
      is_error: false,
      result: "ok",
      session_id: sessionId,
      user_message_uuids: uuids,
      ...extra,
    };
  },
  canUseTool(
    requestId: string,
    toolName = "Bash",
    input: Record<string, unknown> = { command: "ls" },
  ): Record<string, unknown> {
    return {
      type: "control_request",
      request_id: requestId,
      request: { subtype: "can_use_tool", tool_name: toolName, input },
    };
  },
};
