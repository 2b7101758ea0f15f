/**
 * The sidecar's Redis connection (`REDIS_URL`): one client for commands and publishing, and
 * `blocking()` copies for the calls that wait (a blocked connection serves nobody else). The
 * first connect is checked at start-up: an unreachable Redis stops the sidecar with a clear
 * error instead of a cluster that silently forwards nothing. Later drops are logged and the
 * client reconnects by itself (redis' default backoff); commands issued meanwhile wait.
 *
 * Owns: connecting, the reconnect log, closing every copy. Must not: know keys or messages.
 */
import { createClient, type RedisClientType } from "redis";
import type { Logger } from "pino";

export type Redis = RedisClientType;

export interface RedisConnection {
  /** The shared client (commands, publishing, the Socket.IO adapter). */
  client: Redis;
  /** A new connected copy for blocking reads; closed with the connection. */
  blocking(): Promise<Redis>;
  close(): Promise<void>;
}

/** How long the first connect may take before start-up fails. */
const connectTimeoutMs = 5_000;

/** Connects to `url`; rejects with a message naming the URL's host when Redis cannot be reached. */
export async function connectRedis(url: string, log: Logger): Promise<RedisConnection> {
  const where = describe(url);
  const copies: Redis[] = [];
  const open = async (role: string): Promise<Redis> => {
    let ready = false;
    const client = createClient({
      url,
      socket: {
        connectTimeout: connectTimeoutMs,
        // Before the first connect: give up (start-up reports it); after: retry with backoff.
        reconnectStrategy: (retries: number) => (ready ? Math.min(100 * 2 ** retries, 5_000) : false),
      },
    }) as Redis;
    client.on("error", (err: unknown) => {
      if (ready) log.warn({ err, redis: where, role }, "redis connection error");
    });
    client.on("reconnecting", () => log.warn({ redis: where, role }, "redis reconnecting"));
    client.on("ready", () => {
      if (ready) log.info({ redis: where, role }, "redis reconnected");
    });
    try {
      await client.connect();
    } catch (err) {
      throw new Error(
        `Cannot reach Redis at ${where} (REDIS_URL): ${err instanceof Error ? err.message : String(err)}. Start Redis or unset REDIS_URL to run a single sidecar.`,
      );
    }
    ready = true;
    copies.push(client);
    return client;
  };
  const client = await open("main");
  return {
    client,
    blocking: () => open("blocking"),
    async close() {
      // A blocking copy may sit in a wait: destroyed, not drained; the shared client finishes its commands.
      const [main, ...blocking] = copies.splice(0);
      for (const copy of blocking) copy.destroy();
      await main?.close().catch(() => main.destroy());
    },
  };
}

/** The URL without its password, for logs and errors. */
function describe(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname === "/" ? "" : u.pathname}`;
  } catch {
    return "(an invalid REDIS_URL)";
  }
}
