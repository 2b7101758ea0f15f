"use client";

import { memo, useEffect, useState } from "react";
import type { Socket } from "socket.io-client";
import { closedByServer, getSocket } from "./wire-client";

export interface SocketState {
  socket: Socket | undefined;
  connected: boolean;
  /** Why the last connection attempt failed, in words for people. */
  problem: string | undefined;
}

const handshakeProblems: Record<string, string> = {
  unauthorized: "Your sign-in is no longer valid. Reload the page or sign in again.",
  forbidden_origin: "The server refused this page's origin. Open Conduit at its configured public URL.",
};

/** The shared socket and whether it is connected; opens it on first use (client only). */
export function useSocket(): SocketState {
  const [state, setState] = useState<SocketState>({ socket: undefined, connected: false, problem: undefined });
  useEffect(() => {
    const socket = getSocket();
    const update = (problem?: string) => setState({ socket, connected: socket.connected, problem });
    const onConnect = () => update();
    const onDisconnect = (reason: string) =>
      update(
        reason === closedByServer
          ? "The server closed this connection: your access changed. Reload the page."
          : undefined,
      );
    const onError = (err: Error) =>
      update(handshakeProblems[err.message] ?? "Cannot reach the session server. Retrying…");
    socket.on("connect", onConnect);
    socket.on("disconnect", onDisconnect);
    socket.on("connect_error", onError);
    update();
    if (!socket.connected && !socket.active) socket.connect();
    return () => {
      socket.off("connect", onConnect);
      socket.off("disconnect", onDisconnect);
      socket.off("connect_error", onError);
    };
  }, []);
  return state;
}

/** A small pill showing the socket's state; nothing while connected. */
export const ConnectionNotice = memo(function ConnectionNotice({ state }: { state: SocketState }) {
  if (!state.socket || state.connected) return null;
  return (
    <span
      role="status"
      data-testid="connection-notice"
      className="inline-flex items-center gap-1.5 rounded-full bg-amber-50 px-2 py-0.5 text-xs text-amber-900 ring-1 ring-amber-200 ring-inset dark:bg-amber-950 dark:text-amber-200 dark:ring-amber-900"
    >
      <span aria-hidden className="size-1.5 motion-safe:animate-pulse rounded-full bg-amber-500" />
      {state.problem ?? "Connecting…"}
    </span>
  );
});
