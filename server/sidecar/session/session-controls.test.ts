import { describe, expect, it } from "vitest";
import { decodePromptImages, sniffImageType } from "./prompt-images";
import { toContextUsage, toModelOptions, toSlashCommands } from "./session-controls";

describe("the CLI's answers as browsers get them", () => {
  it("keeps the model list's values and names, drops entries without a value", () => {
    expect(
      toModelOptions([
        { value: "default", resolvedModel: "claude-opus-5-5", displayName: "Default (recommended)", description: "Opus", supportsAdaptiveThinking: true },
        { value: "sonnet", displayName: "" },
        { displayName: "no value" },
        "junk",
      ]),
    ).toEqual([
      { value: "default", resolvedModel: "claude-opus-5-5", displayName: "Default (recommended)", description: "Opus", adaptiveThinking: true },
      { value: "sonnet", displayName: "sonnet" },
    ]);
    expect(toModelOptions(undefined)).toEqual([]);
  });

  it("reduces context usage to the meter's figures, percent clamped and whole", () => {
    const usage = toContextUsage({
      categories: [
        { name: "System prompt", tokens: 1906, kind: "used", color: "x" },
        { name: "Free space", tokens: 953627, kind: "free" },
        { tokens: 5 },
      ],
      totalTokens: 13373,
      maxTokens: 1_000_000,
      percentage: 1.3373,
      gridRows: [[{}]],
      model: "claude-opus-5-5",
    });
    expect(usage).toEqual({
      totalTokens: 13373,
      maxTokens: 1_000_000,
      percentage: 1,
      model: "claude-opus-5-5",
      categories: [
        { name: "System prompt", tokens: 1906, kind: "used" },
        { name: "Free space", tokens: 953627, kind: "free" },
      ],
    });
    expect(toContextUsage({ totalTokens: 50, maxTokens: 100 }).percentage).toBe(50);
    expect(toContextUsage({ percentage: 140 }).percentage).toBe(100);
  });

  it("lists slash commands without internal ones, descriptions shortened", () => {
    const commands = toSlashCommands([
      { name: "compact", description: "Clear history but keep a summary", argumentHint: "<instructions>" },
      { name: "__remote-workflow", description: "internal" },
      { name: "dataviz", description: "x".repeat(1000) },
      { name: "" },
    ]);
    expect(commands.map((c) => c.name)).toEqual(["compact", "dataviz"]);
    expect(commands[0]).toEqual({ name: "compact", description: "Clear history but keep a summary", argumentHint: "<instructions>" });
    expect(commands[1]!.description!.length).toBeLessThanOrEqual(240);
  });
});

describe("prompt images", () => {
  const png = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", "base64");

  it("knows the four types by their signatures", () => {
    expect(sniffImageType(png)).toBe("image/png");
    expect(sniffImageType(Buffer.from([0xff, 0xd8, 0xff, 0xe0]))).toBe("image/jpeg");
    expect(sniffImageType(Buffer.from("GIF89a"))).toBe("image/gif");
    expect(sniffImageType(Buffer.from("RIFF\0\0\0\0WEBPVP8 "))).toBe("image/webp");
    expect(sniffImageType(Buffer.from("<svg xmlns="))).toBeUndefined();
  });

  it("refuses an image that is not what it claims, naming it", () => {
    expect(decodePromptImages([{ mediaType: "image/png", data: png.toString("base64") }])[0]!.byteLength).toBe(png.byteLength);
    expect(() => decodePromptImages([{ mediaType: "image/jpeg", data: png.toString("base64"), name: "a.jpg" }])).toThrow(
      '"a.jpg" was sent as JPEG but is a PNG image.',
    );
    expect(() => decodePromptImages([{ mediaType: "image/png", data: Buffer.from("<svg/>").toString("base64") }])).toThrow(
      "Image 1 is not a PNG, JPEG, GIF or WebP image.",
    );
  });
});
