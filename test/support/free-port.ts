/** A free TCP port on 127.0.0.1, for a child process that must be told its port up front. */
import { createServer } from "node:net";

/** Asks the kernel for a free port and releases it (a tiny race, acceptable in tests). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const address = srv.address();
      srv.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}
