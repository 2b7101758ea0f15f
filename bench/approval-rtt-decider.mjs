#!/usr/bin/env node
// The approver of bench/approval-rtt.ts, in its own process as a browser would be: a socket.io
// client of the sidecar that allows every approval the moment it sees it.
// argv: <sidecar url> <origin> <socket token>. Prints "ready" once connected.
import { io } from "socket.io-client";

const [url, origin, token] = process.argv.slice(2);
const socket = io(url, {
  transports: ["websocket"],
  extraHeaders: { origin },
  auth: { token },
  reconnection: false,
  forceNew: true,
});
let seq = 0;
socket.on("approval:requested", (view) => {
  socket.emit(
    "approval:decide",
    { approvalId: view.id, decision: { behavior: "allow" }, commandId: `bench-${process.pid}-${++seq}` },
    (ack) => {
      if (!ack?.ok) process.stderr.write(`decide failed: ${JSON.stringify(ack)}\n`);
    },
  );
});
socket.once("connect", () => process.stdout.write("ready\n"));
socket.once("connect_error", (err) => {
  process.stderr.write(`connect failed: ${err.message}\n`);
  process.exit(1);
});
process.on("SIGTERM", () => {
  socket.close();
  process.exit(0);
});
