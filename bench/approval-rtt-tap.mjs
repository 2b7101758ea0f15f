#!/usr/bin/env node
// Sits between Conduit and a real `claude` for bench/approval-rtt.ts: spawns the CLI (argv[3],
// the rest its arguments), passes both pipes through untouched, and times every can_use_tool
// question from the moment the CLI's line reaches it to the moment Conduit's answer does. Each
// timing (µs) is appended as a line to the file argv[2].
import { spawn } from "node:child_process";
import { appendFileSync } from "node:fs";

const [out, cli, ...args] = process.argv.slice(2);
const child = spawn(cli, args, { stdio: ["pipe", "pipe", "inherit"] });
const asked = new Map();

/** Calls `onLine` for each complete line of `stream` while forwarding the bytes unchanged. */
function tap(from, to, onLine) {
  let rest = "";
  from.on("data", (chunk) => {
    const text = rest + chunk.toString("utf8");
    const lines = text.split("\n");
    rest = lines.pop() ?? "";
    for (const line of lines) onLine(line);
    to.write(chunk);
  });
  from.on("end", () => to.end());
}

tap(child.stdout, process.stdout, (line) => {
  if (!line.includes('"can_use_tool"')) return;
  const message = JSON.parse(line);
  if (message.type === "control_request") asked.set(message.request_id, process.hrtime.bigint());
});
tap(process.stdin, child.stdin, (line) => {
  if (!line.includes('"control_response"')) return;
  const id = JSON.parse(line).response?.request_id;
  const at = asked.get(id);
  if (at === undefined) return;
  asked.delete(id);
  appendFileSync(out, `${(process.hrtime.bigint() - at) / 1000n}\n`);
});
child.stdin.on("error", () => undefined);
child.on("exit", (code, signal) => {
  if (signal) process.kill(process.pid, signal);
  else process.exit(code ?? 0);
});
