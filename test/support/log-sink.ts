/** A log destination for tests: keeps every line written, to read back as one text. */
import { Writable } from "node:stream";

/** A destination that keeps what was written. */
export function logSink(): { stream: Writable; text: () => string } {
  let text = "";
  const stream = new Writable({
    write(chunk, _encoding, done) {
      text += String(chunk);
      done();
    },
  });
  return { stream, text: () => text };
}
