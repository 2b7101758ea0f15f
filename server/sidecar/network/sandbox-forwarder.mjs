// The first program inside a network-narrowed sandbox (`bwrap --unshare-net`): the sandbox has a
// loopback of its own and no route out, so this listens on 127.0.0.1:<port> inside and forwards
// each connection to a Unix socket that the sidecar bound into the sandbox (Conduit's credential
// proxy; the filtering egress proxy for an allow-list). Then it runs the CLI with the same stdio,
// passes signals on, and exits as the CLI exits.
//
//   node sandbox-forwarder.mjs <port>=<unix socket> [...] -- <file> [args...]
//
// Plain JavaScript with nothing but node's built-ins: it runs with the host's node, read-only,
// before anything of Conduit's TypeScript toolchain could be there.
import { spawn } from "node:child_process";
import net from "node:net";
import os from "node:os";

const argv = process.argv.slice(2);
const separator = argv.indexOf("--");
if (separator < 0 || separator === argv.length - 1) {
  process.stderr.write("sandbox-forwarder: usage: <port>=<socket> ... -- <file> [args...]\n");
  process.exit(2);
}
const forwards = argv.slice(0, separator).map((spec) => {
  const at = spec.indexOf("=");
  const port = Number(spec.slice(0, at));
  if (at < 0 || !Number.isInteger(port) || port <= 0 || port > 65535) {
    process.stderr.write(`sandbox-forwarder: bad forward ${JSON.stringify(spec)}\n`);
    process.exit(2);
  }
  return { port, socket: spec.slice(at + 1) };
});
const [file, ...args] = argv.slice(separator + 1);

function listen({ port, socket }) {
  const server = net.createServer((client) => {
    const upstream = net.connect(socket);
    client.setNoDelay(true);
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
    client.pipe(upstream).pipe(client);
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve(server));
  });
}

try {
  // Listening before the CLI starts: its first request goes to the model at once.
  await Promise.all(forwards.map(listen));
} catch (error) {
  process.stderr.write(`sandbox-forwarder: cannot listen inside the sandbox: ${error.message}\n`);
  process.exit(70);
}

const child = spawn(file, args, { stdio: "inherit" });
for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"]) {
  // Handled, so this process waits for the CLI's own exit instead of leaving before it.
  process.on(signal, () => child.kill(signal));
}
child.on("error", (error) => {
  process.stderr.write(`sandbox-forwarder: cannot start ${file}: ${error.message}\n`);
  process.exit(127);
});
child.on("exit", (code, signal) => {
  process.exit(code ?? 128 + (os.constants.signals[signal] ?? 0));
});
