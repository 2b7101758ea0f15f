/**
 * Slow consumers: a socket whose browser stops reading (a frozen tab, a dead network the kernel
 * has not noticed) makes the sidecar buffer every event sent to it — in the WebSocket's send
 * buffer and engine.io's packet queue — without bound. About every second this sweep looks at
 * each socket's backlog and cuts the connection of one past the bound (4 MB): its transport is torn down
 * at once (a polite close would queue behind the backlog), the buffers are freed, and the browser,
 * once it reads again, reconnects and re-subscribes from the last seq it holds — the catch-up reads
 * the rest from the log, exactly once.
 */
import type { Logger } from "pino";
import type { Server, Socket } from "socket.io";

export interface SlowConsumerOptions {
  /** Bytes waiting in the WebSocket past which a socket is cut. Default 4 MB (events over 64 KB go trimmed: a reading browser never has this much waiting). */
  maxBufferedBytes?: number;
  /** Packets waiting in engine.io's queue past which a socket is cut. Default 5,000. */
  maxQueuedPackets?: number;
  intervalMs?: number;
  log: Pick<Logger, "warn">;
}

/** What one socket has waiting to be sent. */
export interface Backlog {
  /** Bytes in the WebSocket's send buffer, plus those of the packets engine.io still queues. */
  bufferedBytes: number;
  queuedPackets: number;
}

interface EngineConnection {
  writeBuffer?: unknown[];
  transport?: { name?: string; socket?: { bufferedAmount?: number; terminate?: () => void } };
  close?: () => void;
}

/**
 * engine.io hands a batch to the WebSocket and queues every later packet in its own `writeBuffer`
 * until the socket drains, which a reader that stopped never lets happen: after the first batch
 * the backlog grows there, a few hundred large packets (under the packet bound) holding hundreds
 * of MB. So the queued packets' bytes count too (chaos A5 saw 34 MB held and no cut).
 */
export function backlogOf(socket: Socket): Backlog {
  const conn = socket.conn as unknown as EngineConnection;
  const queued = conn.writeBuffer ?? [];
  let queuedBytes = 0;
  for (const packet of queued) queuedBytes += packetBytes(packet);
  return {
    bufferedBytes: (conn.transport?.socket?.bufferedAmount ?? 0) + queuedBytes,
    queuedPackets: queued.length,
  };
}

/** The size of an engine.io packet's data (a string or binary), 0 for anything else. */
function packetBytes(packet: unknown): number {
  const data = (packet as { data?: unknown } | null)?.data;
  if (typeof data === "string") return data.length;
  if (data instanceof ArrayBuffer || ArrayBuffer.isView(data)) return data.byteLength;
  return 0;
}

/** Starts the sweep over `io`'s sockets. */
export function startSlowConsumerSweep(io: Server, options: SlowConsumerOptions): { close(): void; evicted(): number } {
  const maxBytes = options.maxBufferedBytes ?? 4 * 1024 * 1024;
  const maxPackets = options.maxQueuedPackets ?? 5_000;
  let evicted = 0;
  const timer = setInterval(() => {
    for (const socket of io.of("/").sockets.values()) {
      const backlog = backlogOf(socket);
      if (backlog.bufferedBytes <= maxBytes && backlog.queuedPackets <= maxPackets) continue;
      evicted += 1;
      options.log.warn(
        { socketId: socket.id, userId: (socket.data as { user?: { id: string } }).user?.id, ...backlog },
        "socket cut: it stopped reading (it reconnects and catches up from the log)",
      );
      const conn = socket.conn as unknown as EngineConnection;
      // terminate(): the TCP connection goes now, with its buffers; close() would wait behind them
      const ws = conn.transport?.socket;
      if (ws?.terminate) ws.terminate();
      else conn.close?.();
    }
  }, options.intervalMs ?? 1_000);
  timer.unref();
  return { close: () => clearInterval(timer), evicted: () => evicted };
}
