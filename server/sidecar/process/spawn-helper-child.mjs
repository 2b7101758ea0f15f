// The sidecar's spawn helper (spawn-helper.ts): a small Node process that starts the sidecar's
// long-lived children (the claude CLIs) and hands their pipes to the sidecar over IPC, so that the
// sidecar's loop never blocks in fork(). Plain JavaScript, so it starts without tsx.
//
// Asked { type: "spawn", id, file, args, cwd, env }, it answers, in this order: an "stdin", a
// "stdout" and a "stderr" message, each carrying that pipe's handle (the handle leaves this process
// with the message); then { type: "spawned", id, pid }; and later { type: "exit", id, code, signal }.
// A child that cannot start: { type: "error", id, message, code }. It exits when the sidecar goes
// (the IPC channel closes); the children stay (they are the sidecar's to stop or reap).
import { spawn } from "node:child_process";

process.on("message", (request) => {
  if (request?.type !== "spawn") return;
  const { id, file, args, cwd, env } = request;
  const fail = (error) => process.send?.({ type: "error", id, message: error.message, code: error.code });
  let child;
  try {
    // as spawnDetached in cli-process.ts: an argv and no shell, a process group of its own
    child = spawn(file, args, { cwd, env, stdio: ["pipe", "pipe", "pipe"], detached: true, shell: false, windowsHide: true });
  } catch (error) {
    fail(error instanceof Error ? error : new Error(String(error)));
    return;
  }
  // Node starts reading a child's pipes as it creates them; what this process read would never
  // reach the sidecar. Stopped before any read can complete (nothing runs between spawn and here).
  child.stdout._handle?.readStop();
  child.stderr._handle?.readStop();
  let spawned = false;
  // after the spawn, an 'error' is about this process's handle of the child (a failed kill or
  // send), not the child: the sidecar's pipes and its exit are unaffected, so it is not told
  child.on("error", (error) => {
    if (!spawned) fail(error);
  });
  child.once("spawn", () => {
    spawned = true;
    process.send?.({ type: "stdin", id }, child.stdin);
    process.send?.({ type: "stdout", id }, child.stdout);
    process.send?.({ type: "stderr", id }, child.stderr);
    process.send?.({ type: "spawned", id, pid: child.pid });
  });
  child.once("exit", (code, signal) => process.send?.({ type: "exit", id, code, signal }));
});
process.on("disconnect", () => process.exit(0));
