import { describe, expect, it } from "vitest";
import { ZPrompt } from "./session";
import { base64Bytes, maxPromptImageBytes } from "./session-controls";

const prompt = (extra: Record<string, unknown>) => ({ sessionId: "s1", commandId: "cmd-12345678", ...extra });
const issue = (value: unknown) => {
  const parsed = ZPrompt.safeParse(value);
  return parsed.success ? undefined : parsed.error.issues[0]?.message;
};

describe("a prompt's images", () => {
  it("measures base64 without decoding", () => {
    expect(base64Bytes(Buffer.from("hello").toString("base64"))).toBe(5);
    expect(base64Bytes(Buffer.alloc(3000).toString("base64"))).toBe(3000);
  });

  it("takes text, images, or both; never neither", () => {
    const image = { mediaType: "image/png", data: "iVBORw0KGgo=" };
    expect(issue(prompt({ text: "hi" }))).toBeUndefined();
    expect(issue(prompt({ text: "", images: [image] }))).toBeUndefined();
    expect(issue(prompt({ text: "  " }))).toBe("The prompt is empty.");
  });

  it("refuses other types, oversize images, too many, and bad base64, saying which limit", () => {
    expect(issue(prompt({ text: "x", images: [{ mediaType: "image/svg+xml", data: "PHN2Zz4=" }] }))).toBe(
      "Only PNG, JPEG, GIF and WebP images can be sent.",
    );
    const big = Buffer.alloc(maxPromptImageBytes + 1).toString("base64");
    expect(issue(prompt({ text: "x", images: [{ mediaType: "image/png", data: big }] }))).toBe("An image may have at most 5 MB.");
    const small = { mediaType: "image/png", data: "iVBORw0KGgo=" };
    expect(issue(prompt({ text: "x", images: Array.from({ length: 21 }, () => small) }))).toBe(
      "A prompt may carry at most 20 images.",
    );
    expect(issue(prompt({ text: "x", images: [{ mediaType: "image/png", data: "not base64!" }] }))).toBe(
      "An image's data is not base64.",
    );
    const four = Buffer.alloc(4.5 * 1024 * 1024).toString("base64");
    expect(issue(prompt({ text: "x", images: Array.from({ length: 5 }, () => ({ mediaType: "image/png", data: four })) }))).toBe(
      "The images of one prompt may have at most 20 MB together.",
    );
  });
});
