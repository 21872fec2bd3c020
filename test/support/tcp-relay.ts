/**
 * A TCP relay on a fixed loopback port that the test switches on and off, for servers
 * that are "not there yet": while it is off the port refuses connections (ECONNREFUSED,
 * like a model server that has not started); once on, every connection is piped to the
 * target. The fakes choose their own ports, so this is how a fixed URL can start dead.
 */
import { createServer, connect, type Server, type Socket } from "node:net";
import { freePort } from "./free-port.js";
export { freePort };

/** A relay whose port is reserved but not listening until `listen()`. */
export interface TcpRelay {
  port: number;
  /** Starts accepting on `port` and piping to the target. */
  listen(): Promise<void>;
  /** Stops accepting and cuts every open connection (the port refuses again). */
  close(): Promise<void>;
  /** Connections accepted so far. */
  readonly accepted: number;
}

/** A free loopback port (bound and released at once). */

/** Reserves a port for a relay to `targetPort` on 127.0.0.1; nothing listens until `listen()`. */
export async function createTcpRelay(targetPort: number): Promise<TcpRelay> {
  const port = await freePort();
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let accepted = 0;
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
  };
  return {
    port,
    get accepted() {
      return accepted;
    },
    async listen() {
      if (server) return;
      const srv = createServer((inbound) => {
        accepted++;
        const outbound = connect(targetPort, "127.0.0.1");
        track(inbound);
        track(outbound);
        inbound.pipe(outbound);
        outbound.pipe(inbound);
        inbound.on("close", () => outbound.destroy());
        outbound.on("close", () => inbound.destroy());
      });
      await new Promise<void>((resolve, reject) => {
        srv.once("error", reject);
        srv.listen(port, "127.0.0.1", () => resolve());
      });
      server = srv;
    },
    async close() {
      const srv = server;
      server = undefined;
      for (const socket of sockets) socket.destroy();
      if (srv) await new Promise<void>((resolve) => srv.close(() => resolve()));
    },
  };
}
