/**
 * The scrubber only looks closely where a cheap first pass (every few characters) saw a piece of a
 * secret: these cases pin that no piece slips between the places it looks, whatever the offset, and
 * that a reply the model echoed its secret into twice, back to back, loses both.
 */
import { describe, expect, it } from "vitest";
import { createSecretScrubber, REDACTED } from "../../src/security/secret-scrubber.js";

const SECRET = "7000000001:AAHk3c9Qx_Vb-2LmNpQrStUvWxYz0123456";
const scrubber = createSecretScrubber([SECRET]);
const filler = "Here is the weather for today, with a light breeze from the west. ";

describe("secret scrubber: pieces at every offset", () => {
  it("blanks every 12-character piece of a secret, at every place in the secret and every offset in a long reply", () => {
    for (let from = 0; from + 12 <= SECRET.length; from += 5) {
      const piece = SECRET.slice(from, from + 12);
      for (let offset = 0; offset < 16; offset++) {
        const text = `${filler.repeat(3).slice(0, 100 + offset)}${piece} and more${filler}`;
        const scrubbed = scrubber.scrub(text);
        expect(scrubbed, `piece ${from}, offset ${offset}`).not.toContain(piece);
        expect(scrubbed).toContain(REDACTED);
        expect(scrubber.has(text)).toBe(true);
      }
    }
  });

  it("leaves pieces of 11 characters and long replies without secrets as they are", () => {
    const short = `${filler}${SECRET.slice(20, 31)}${filler}`;
    expect(scrubber.scrub(short)).toBe(short);
    const long = filler.repeat(200);
    expect(scrubber.scrub(long)).toBe(long);
    expect(scrubber.hasLoosely(long)).toBe(false);
  });

  it("blanks a secret written twice back to back, and two pieces one character apart", () => {
    expect(scrubber.scrub(`token: ${SECRET}${SECRET}.`)).toBe(`token: ${REDACTED}.`);
    const two = `a ${SECRET.slice(0, 14)}/${SECRET.slice(25, 40)} b`;
    expect(scrubber.scrub(two)).toBe(`a ${REDACTED}/${REDACTED} b`);
  });
});
