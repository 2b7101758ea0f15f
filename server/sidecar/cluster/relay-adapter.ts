/**
 * The Socket.IO adapter of a clustered sidecar: `@socket.io/redis-streams-adapter` (room emits
 * reach every node through one Redis stream), with two changes to its hot path that the relay
 * bench (`npm run bench -- cluster`, docs/PERFORMANCE.md §4) showed:
 *
 * - **Local sockets first.** The cluster adapter awaits the `XADD` of each broadcast before it
 *   writes to this node's own sockets, only to append the stream offset to the packet for
 *   connection-state recovery. Conduit does not enable that recovery (a client catches up from
 *   the event log instead), so here a broadcast is handed to Redis (encoded at once, in emit
 *   order on one connection, so the other nodes still see every node's emits in order) and
 *   written to the local sockets in the same tick, without a Redis round trip in between. With
 *   recovery enabled, or for a `local` emit, the adapter's own path runs unchanged.
 * - **Its own entries unread.** Every node reads the whole stream, its own broadcasts included,
 *   and the adapter decodes (JSON-parses) each entry before it sees that the entry is its own and
 *   drops it. Here an entry this node wrote is dropped before it is decoded (and, on the sealed
 *   client of `adapter-sealing.ts`, before it is decrypted: it comes back without its data).
 *
 * Owns: those two changes. Must not: change what reaches whom (rooms, exceptions, flags and
 * order are the adapter's), or know what is emitted.
 */
import { createAdapter, type RedisStreamsAdapterOptions } from "@socket.io/redis-streams-adapter";
import { Adapter, MessageType, type BroadcastOptions } from "socket.io-adapter";

/** What a failed publish is reported with (the local sockets got the packet; the other nodes did not). */
export type PublishFailure = (err: unknown) => void;

/** The adapter's members this module uses (protected or untyped in its declarations). */
interface StreamsAdapterInternals {
  readonly uid: string;
  readonly nsp: { server: { opts: { connectionStateRecovery?: unknown } } };
  broadcast(packet: unknown, opts: BroadcastOptions): void | Promise<void>;
  publishAndReturnOffset(message: { type: MessageType; data: unknown }): Promise<string>;
  onRawMessage(raw: { uid?: unknown }, offset: string): unknown;
}

/** The streams adapter's factory with the changes above; pass it to `io.adapter()`. */
export function createRelayAdapter(
  redisClient: unknown,
  options: RedisStreamsAdapterOptions,
  onPublishFailure: PublishFailure,
): (nsp: unknown) => Adapter {
  const base = createAdapter(redisClient, options);
  // A function, not an arrow: Socket.IO calls it with `new` (an object returned from it wins).
  return function relayAdapter(nsp) {
    const adapter = base(nsp);
    relayLocalFirst(adapter as unknown as StreamsAdapterInternals, onPublishFailure);
    return adapter;
  };
}

/** Rewires one adapter instance (exported for the tests). */
export function relayLocalFirst(adapter: StreamsAdapterInternals, onPublishFailure: PublishFailure): void {
  const clusterBroadcast = adapter.broadcast.bind(adapter);
  const localBroadcast = Adapter.prototype.broadcast;
  adapter.broadcast = (packet, opts) => {
    if (opts.flags?.local || adapter.nsp.server.opts.connectionStateRecovery) return clusterBroadcast(packet, opts);
    // Encoded and queued on the Redis connection synchronously, before the local write below
    // touches the packet; its answer (the offset) is not needed without recovery.
    adapter
      .publishAndReturnOffset({
        type: MessageType.BROADCAST,
        data: { packet, opts: { rooms: [...opts.rooms], except: [...(opts.except ?? [])], flags: opts.flags } },
      })
      .catch(onPublishFailure);
    localBroadcast.call(adapter as unknown as Adapter, packet as Parameters<Adapter["broadcast"]>[0], opts);
  };
  const onRawMessage = adapter.onRawMessage.bind(adapter);
  adapter.onRawMessage = (raw, offset) => {
    if (raw.uid === adapter.uid) return undefined;
    return onRawMessage(raw, offset);
  };
}
