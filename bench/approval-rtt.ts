/**
 * Approval round trip: the time from a CLI writing a `can_use_tool` control_request to Conduit
 * writing the control_response, through the whole approval path (persist, route to the user's
 * room, a socket.io client that answers on sight, authorize, record, audit, answer).
 *
 * 50 sessions run a stand-in CLI (bench/approval-rtt-cli.mjs) that asks 20 questions, one
 * after another with a pause of about a second between them (APPROVAL_RTT_GAP_MS; 0 asks back
 * to back and measures saturation instead, where queueing dominates), and times each on its
 * side (from just before its write to the answer's arrival, so the figure includes both pipes).
 * One socket.io client, the workspace owner, decides them all.
 *
 * Last line: `approval-rtt: sessions=50 p50_ms=… p99_ms=…`.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import pino from "pino";
import { io as connect } from "socket.io-client";
import { mintSocketToken } from "../server/shared/socket-token";
import type { ApprovalView } from "../server/shared/wire/approval";
import { ApprovalService } from "../server/sidecar/approval/approval-service";
import { SessionHub } from "../server/sidecar/session/session-hub";
import { createSessionRunner } from "../server/sidecar/session/session-runner";
import { attachApprovalSockets, notifyUsersOf } from "../server/sidecar/socket/approval-socket";
import { createSocketServer } from "../server/sidecar/socket/create-socket-server";
import { attachSessionSockets } from "../server/sidecar/socket/session-socket";
import { createSessionFixtures } from "../test/session-fixtures";

const here = path.dirname(fileURLToPath(import.meta.url));
const origin = "http://127.0.0.1:3997";
const secret = "approval-rtt-secret-".padEnd(40, "x");
const SESSIONS = Number(process.env.APPROVAL_RTT_SESSIONS ?? 50);
const ASKS = Number(process.env.APPROVAL_RTT_ASKS ?? 20);
/** Mean pause between one session's questions; 0 asks back to back (a saturation test). */
const GAP_MS = Number(process.env.APPROVAL_RTT_GAP_MS ?? 1000);

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export default async function run(): Promise<void> {
  const log = pino({ level: "silent" });
  const fx = await createSessionFixtures();
  const server = createSocketServer({
    secret,
    allowedOrigins: [origin],
    findUser: async (id) =>
      (await fx.db.user.findUnique({ where: { id }, select: { id: true, email: true, name: true } })) ?? undefined,
    log,
  });
  const service = new ApprovalService({ db: fx.db, log, notify: notifyUsersOf(server.io) });
  const hub = new SessionHub({
    db: fx.db,
    configRoot: path.join(fx.dataDir, "claude-config"),
    sidecarId: "bench",
    log,
    decidePermission: service.decidePermission,
    createRunner: (options, decidePermission) =>
      createSessionRunner(options, {
        cliPath: process.execPath,
        argsPrefix: [path.join(here, "approval-rtt-cli.mjs"), "--asks", String(ASKS), "--gap-ms", String(GAP_MS)],
        decidePermission,
      }),
  });
  attachSessionSockets(server.io, { hub, db: fx.db, log });
  attachApprovalSockets(server.io, { service, log });
  const port = await server.listen(0, "127.0.0.1");
  const socket = connect(`http://127.0.0.1:${port}`, {
    transports: ["websocket"],
    extraHeaders: { origin },
    auth: { token: await mintSocketToken(secret, fx.owner.id, 600) },
    reconnection: false,
    forceNew: true,
  });
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", () => resolve());
    socket.once("connect_error", reject);
  });
  let seq = 0;
  socket.on("approval:requested", (view: ApprovalView) => {
    socket.emit(
      "approval:decide",
      { approvalId: view.id, decision: { behavior: "allow" }, commandId: `bench-${++seq}-decide` },
      () => undefined,
    );
  });

  const timings: number[] = [];
  const results = new Map<string, () => void>();
  hub.onDidEmitEvent((event) => {
    const payload = event.payload as { type?: string; result?: string };
    if (event.kind !== "cli" || payload?.type !== "result") return;
    timings.push(...(JSON.parse(payload.result ?? "[]") as number[]).map((us) => us / 1000));
    results.get(event.sessionId)?.();
  });

  const actor = { id: fx.owner.id, name: fx.owner.name };
  const access = { workspace: fx.workspace, role: "owner" };
  const started = Date.now();
  try {
    const views = await Promise.all(
      Array.from({ length: SESSIONS }, (_, i) =>
        hub.createSession(actor, access, { mode: "default", commandId: `bench-create-${i}` }),
      ),
    );
    await Promise.all(
      views.map(
        (view, i) =>
          new Promise<void>((resolve, reject) => {
            results.set(view.id, resolve);
            hub.prompt(actor, view.id, "go", `bench-prompt-${i}`).catch(reject);
          }),
      ),
    );
  } finally {
    socket.close();
    await hub.close();
    await service.close();
    await server.close();
    await fx.close();
  }
  const sorted = [...timings].sort((a, b) => a - b);
  console.log(`approvals answered: ${sorted.length} in ${Date.now() - started} ms (gap ${GAP_MS} ms)`);
  console.log(
    `approval-rtt: sessions=${SESSIONS} p50_ms=${percentile(sorted, 50).toFixed(2)} p99_ms=${percentile(sorted, 99).toFixed(2)}`,
  );
}
