// The sidecar's exec helper (exec-helper.ts): a small Node process that spawns children for the
// sidecar and sends back their output. Plain JavaScript, so it starts without tsx. Each message is
// { id, file, args, options, input }; each answer { id, stdout, stderr, error }. It exits when the
// sidecar goes (the IPC channel closes).
import { execFile } from "node:child_process";

process.on("message", (request) => {
  const { id, file, args, options, input } = request;
  let child;
  const answer = (error, stdout, stderr) => {
    process.send?.({
      id,
      stdout: stdout ?? Buffer.alloc(0),
      stderr: stderr ?? Buffer.alloc(0),
      error: error ? { message: error.message, code: error.code, killed: error.killed, signal: error.signal } : null,
    });
  };
  try {
    child = execFile(file, args, { ...options, encoding: "buffer", windowsHide: true }, answer);
  } catch (error) {
    answer(error instanceof Error ? error : new Error(String(error)), undefined, undefined);
    return;
  }
  if (input !== undefined) child.stdin?.end(Buffer.from(input));
});
process.on("disconnect", () => process.exit(0));
