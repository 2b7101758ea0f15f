/**
 * The viewers of a session across every sidecar: the distinct people among the sockets in the
 * session's room, asked through the Socket.IO adapter (`fetchSockets` reaches every node with the
 * Redis streams adapter). `SessionPresence` knows only this node's sockets; in a cluster the
 * announced list comes from here.
 *
 * Owns: the cluster-wide viewer list. Must not: keep state.
 */
import type { Server } from "socket.io";
import type { SocketUser } from "@/server/shared/wire/events";
import type { Viewer } from "@/server/shared/wire/session";

export async function roomViewers(io: Server, room: string): Promise<Viewer[]> {
  const sockets = await io.in(room).fetchSockets();
  const distinct = new Map<string, Viewer>();
  for (const socket of sockets) {
    const user = (socket.data as { user?: SocketUser }).user;
    if (user && !distinct.has(user.id)) distinct.set(user.id, { userId: user.id, name: user.name });
  }
  return [...distinct.values()];
}
