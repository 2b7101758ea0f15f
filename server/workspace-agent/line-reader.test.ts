import { describe, expect, it } from "vitest";
import { LineReader } from "./line-reader";

describe("LineReader", () => {
  it("gives whole lines whatever the chunking", () => {
    const text = "one\ntwo\n\nthree four\nfive";
    for (let size = 1; size <= text.length; size++) {
      const lines: string[] = [];
      const reader = new LineReader((l) => lines.push(l), 100, () => expect.fail("not too long"));
      for (let i = 0; i < text.length; i += size) reader.push(text.slice(i, i + size));
      expect(lines).toEqual(["one", "two", "", "three four"]);
    }
  });

  it("says when a line grows past its cap, and goes on with the next", () => {
    const lines: string[] = [];
    let tooLong = 0;
    const reader = new LineReader((l) => lines.push(l), 5, () => tooLong++);
    reader.push("abcdef");
    expect(tooLong).toBe(1);
    reader.push("\nok\n");
    expect(lines).toEqual(["", "ok"]);
  });
});
