/**
 * The sidecar process: Socket.IO server, and (as later layers land) the session supervisor,
 * approval queues, event log writer and cost accounting. Wiring only; the parts live in
 * server/sidecar/{process,session,socket}.
 */
import pino from "pino";
import { getDb } from "@/server/db/client";
import { getEnv, requireSetting } from "@/server/env/env";
import { claudeVersion, resolveClaudeBinary } from "@/server/sidecar/process/claude-binary";
import { createSocketServer } from "@/server/sidecar/socket/create-socket-server";

const log = pino({ name: "sidecar", level: getEnv().LOG_LEVEL });

async function main(): Promise<void> {
  const env = getEnv();
  const secret = requireSetting(env, "NEXTAUTH_SECRET");
  const publicUrl = env.CONDUIT_PUBLIC_URL ?? `http://${env.HOST}:${env.PORT}`;

  const cliPath = resolveClaudeBinary();
  const version = await claudeVersion(cliPath);
  log.info({ cliPath, version }, "claude CLI found");

  const db = getDb();
  const server = createSocketServer({
    secret,
    allowedOrigins: originsFor(publicUrl),
    findUser: async (id) => {
      const user = await db.user.findUnique({ where: { id } });
      return user ? { id: user.id, email: user.email, name: user.name } : undefined;
    },
    log,
  });
  const port = await server.listen(env.CONDUIT_SIDECAR_PORT, "127.0.0.1");
  log.info({ port }, "sidecar listening");

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, "sidecar stopping");
    server
      .close()
      .then(() => db.$disconnect())
      .finally(() => process.exit(0));
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
}

/** The public origin, plus its localhost/127.0.0.1 twin: both name this machine's port. */
function originsFor(publicUrl: string): string[] {
  const url = new URL(publicUrl);
  const origins = [url.origin];
  if (url.hostname === "127.0.0.1") origins.push(url.origin.replace("127.0.0.1", "localhost"));
  if (url.hostname === "localhost") origins.push(url.origin.replace("localhost", "127.0.0.1"));
  return origins;
}

main().catch((err: unknown) => {
  log.fatal({ err }, err instanceof Error ? err.message : "sidecar failed to start");
  process.exit(1);
});
