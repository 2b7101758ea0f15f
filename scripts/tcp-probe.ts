/** True when something accepts TCP connections on host:port (a part's readiness; a port still held). */
import net from "node:net";

export function acceptsTcp(port: number, host = "127.0.0.1"): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}
