/**
 * The sidecar's Redis connection (`REDIS_URL`): one client for commands, a `publisher()` copy for
 * the relay's stream (every emit of the cluster), and `blocking()` copies for the calls that wait
 * (a blocked connection serves nobody else). The first connect is checked at start-up: an
 * unreachable Redis stops the sidecar with a clear error instead of a cluster that silently
 * forwards nothing. Later drops are logged and the client reconnects by itself (redis' default
 * backoff); commands issued meanwhile wait.
 *
 * Per-command timers: node-redis gives every command a 5 s timeout by default, made with
 * `AbortSignal.timeout` (~20 µs a command, and a timer that fires 5 s later even when the reply
 * came at once; 4–5 % of a sidecar's busy time while it relays). The command client keeps it.
 * The publisher has none and a capped queue instead (a stalled Redis fails its appends at the
 * cap, not after 5 s). The blocking copies have none, because a client-side timeout on a
 * blocking read races the read's own: a `BLPOP` that pops just as the client gives up drops its
 * element, and the streams adapter's `XREAD BLOCK 5000` met the 5 s timer on every idle stretch.
 *
 * Owns: connecting, the reconnect log, closing every copy. Must not: know keys or messages.
 */
import { createClient, type RedisClientType } from "redis";
import type { Logger } from "pino";

export type Redis = RedisClientType;

export interface RedisConnection {
  /** The shared client for commands (each with node-redis' 5 s timeout). */
  client: Redis;
  /**
   * A new connected copy for the Socket.IO adapter: no per-command timer, at most
   * {@link publisherQueueMax} commands queued. Its `duplicate()`s (the adapter's stream readers)
   * inherit both.
   */
  publisher(): Promise<Redis>;
  /** A new connected copy for blocking reads (no client-side timeout); closed with the connection. */
  blocking(): Promise<Redis>;
  close(): Promise<void>;
}

/** How many commands the publisher may hold unanswered (~2 s of a busy cluster's emits). */
export const publisherQueueMax = 10_000;

/** What sets a copy apart from the command client. */
export interface CopyOptions {
  /** Without node-redis' per-command timer. */
  untimed?: boolean;
  queueMax?: number;
  /** Waits in blocking reads: destroyed at close, not drained. */
  blocks?: boolean;
}

/** How long the first connect may take before start-up fails. */
const connectTimeoutMs = 5_000;

/**
 * node-redis' options for `url`: its host, port and database, its user and password, and TLS for
 * `rediss://` (node-redis reads all of them from the URL).
 */
export function redisClientOptions(url: string, copy: CopyOptions, reconnect: (retries: number) => number | false) {
  return {
    url,
    // timeout 0: no AbortSignal.timeout per command (node-redis arms one only for a positive value)
    ...(copy.untimed ? { commandOptions: { timeout: 0 } } : {}),
    ...(copy.queueMax !== undefined ? { commandsQueueMaxLength: copy.queueMax } : {}),
    socket: { connectTimeout: connectTimeoutMs, reconnectStrategy: reconnect },
  };
}

/** Connects to `url`; rejects with a message naming the URL's host when Redis cannot be reached. */
export async function connectRedis(url: string, log: Logger): Promise<RedisConnection> {
  const where = describe(url);
  const copies: { client: Redis; blocks: boolean }[] = [];
  const open = async (role: string, copy: CopyOptions = {}): Promise<Redis> => {
    let ready = false;
    // Before the first connect: give up (start-up reports it); after: retry with backoff.
    const client = createClient(redisClientOptions(url, copy, (retries) => (ready ? Math.min(100 * 2 ** retries, 5_000) : false))) as Redis;
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
    copies.push({ client, blocks: copy.blocks === true });
    return client;
  };
  const client = await open("main");
  return {
    client,
    publisher: () => open("publisher", { untimed: true, queueMax: publisherQueueMax }),
    blocking: () => open("blocking", { untimed: true, blocks: true }),
    async close() {
      // A blocking copy may sit in a wait: destroyed, not drained; the others finish their
      // commands (the publisher's last appends are the hub's last emits).
      const all = copies.splice(0);
      for (const copy of all) if (copy.blocks) copy.client.destroy();
      await Promise.all(all.filter((c) => !c.blocks).map(({ client: c }) => c.close().catch(() => c.destroy())));
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
