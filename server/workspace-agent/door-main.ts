/**
 * The door process: runs inside the workspace's sandbox (or, with the sandbox off, as a plain
 * child through the same code) and answers requests from stdin on stdout, one JSON line each.
 * argv[2] is its scope (JSON, {@link ZDoorScope}); it serves only operations of its purpose.
 * Requests run concurrently; each answer names its request's id. It exits when stdin ends.
 */
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import { LineReader } from "./line-reader";
import { doorOps } from "./ops";
import type { DoorContext } from "./ops/define";
import { decodeLine, encodeLine, errorToWire, maxRequestLineBytes, ZDoorRequest, type DoorAnswer } from "./protocol";
import { ZDoorScope } from "./scope";

const scope = ZDoorScope.parse(JSON.parse(process.argv[2] ?? "{}"));
const ctx: DoorContext = {
  purpose: scope.purpose,
  workspace: scope.workspace ? { root: scope.workspace.root, excluded: scope.workspace.excluded } : undefined,
  shadowDir: scope.shadowDir,
  configDir: scope.configDir,
};

const write = (answer: DoorAnswer) => {
  process.stdout.write(encodeLine(answer) + "\n");
};

async function handle(line: string): Promise<void> {
  let id = 0;
  try {
    const request = ZDoorRequest.parse(decodeLine(line));
    id = request.id;
    const op = (doorOps as Record<string, { purpose: string; input: { parse(v: unknown): unknown }; run(input: unknown, c: DoorContext): Promise<unknown> }>)[request.op];
    if (!op || !Object.hasOwn(doorOps, request.op)) throw new AppError(ErrorCode.invalidPayload, `the door has no operation ${JSON.stringify(request.op)}`);
    if (op.purpose !== ctx.purpose) throw new AppError(ErrorCode.forbidden, `a ${ctx.purpose} door does not run ${request.op}`);
    const value = await op.run(op.input.parse(request.input), ctx);
    write({ id, ok: true, value: value === undefined ? null : value });
  } catch (err) {
    write({ id, ok: false, error: errorToWire(err) });
  }
}

const lines = new LineReader(
  (line) => {
    if (line.trim() !== "") void handle(line);
  },
  maxRequestLineBytes,
  () => {
    process.stderr.write("door: a request line is too long; exiting\n");
    process.exit(2);
  },
);
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk: string) => lines.push(chunk));
process.stdin.on("end", () => process.exit(0));
// Nothing a request does may take the door down with an unhandled rejection: log and go on.
process.on("unhandledRejection", (reason) => process.stderr.write(`door: unhandled rejection: ${String(reason)}\n`));
