import { describe, expect, it, vi } from "vitest";
import { decodePromptImages, sniffImageType } from "./prompt-images";
import type { WireEvent } from "@/server/shared/wire/session";
import { contextAnswerMaxAgeMs, SessionControls, toContextUsage, toModelOptions, toSlashCommands, type SessionControlsDeps } from "./session-controls";

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

describe("context usage asked by every viewer", () => {
  function rig() {
    let listener: ((event: WireEvent) => void) | undefined;
    const asks: { resolve: (answer: Record<string, unknown>) => void; reject: (err: Error) => void }[] = [];
    const runner = {
      control: (request: { subtype: string }) => {
        expect(request.subtype).toBe("get_context_usage");
        return new Promise<Record<string, unknown>>((resolve, reject) => asks.push({ resolve, reject }));
      },
    };
    const hub = {
      onDidEmitEvent: (l: (event: WireEvent) => void) => {
        listener = l;
        return () => undefined;
      },
      liveRunner: async () => runner,
    };
    const controls = new SessionControls({ hub, db: {}, log: { warn: () => undefined } } as unknown as SessionControlsDeps);
    let seq = 0;
    const emit = (kind: WireEvent["kind"], payload: unknown) =>
      listener!({ sessionId: "s1", seq: ++seq, kind, payload, at: new Date().toISOString() } as WireEvent);
    const settle = () => new Promise((r) => setTimeout(r, 0));
    return { controls, asks, emit, settle };
  }
  const answer = (totalTokens: number) => ({ totalTokens, maxTokens: 1000, categories: [] });

  it("asks the CLI once for asks that come together, and again only after the log moved on", async () => {
    const { controls, asks, emit, settle } = rig();
    const first = controls.contextUsage("s1");
    const second = controls.contextUsage("s1");
    await settle();
    expect(asks).toHaveLength(1);
    asks[0]!.resolve(answer(100));
    expect((await first).totalTokens).toBe(100);
    expect(await second).toBe(await first);
    // the CLI's answer is logged too (a control_response): that changes no conversation
    emit("cli", { type: "control_response", response: { subtype: "success" } });
    expect((await controls.contextUsage("s1")).totalTokens).toBe(100);
    await settle();
    expect(asks).toHaveLength(1);
    // a turn ended: the next ask goes to the CLI
    emit("cli", { type: "result", subtype: "success" });
    const third = controls.contextUsage("s1");
    await settle();
    expect(asks).toHaveLength(2);
    asks[1]!.resolve(answer(250));
    expect((await third).totalTokens).toBe(250);
  });

  it("counts again once the answer is old, with no event (a memory file edited, an MCP server connected)", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      const { controls, asks, settle } = rig();
      const first = controls.contextUsage("s1");
      await settle();
      asks[0]!.resolve(answer(100));
      await first;
      vi.setSystemTime(Date.now() + contextAnswerMaxAgeMs - 1);
      expect((await controls.contextUsage("s1")).totalTokens).toBe(100);
      await settle();
      expect(asks).toHaveLength(1);
      vi.setSystemTime(Date.now() + 2);
      const later = controls.contextUsage("s1");
      await settle();
      expect(asks).toHaveLength(2);
      asks[1]!.resolve(answer(120));
      expect((await later).totalTokens).toBe(120);
    } finally {
      vi.useRealTimers();
    }
  });

  it("keeps no failed answer: the next ask tries again", async () => {
    const { controls, asks, settle } = rig();
    const failed = controls.contextUsage("s1");
    await settle();
    asks[0]!.reject(new Error("the CLI went away"));
    await expect(failed).rejects.toThrow("the CLI went away");
    const again = controls.contextUsage("s1");
    await settle();
    expect(asks).toHaveLength(2);
    asks[1]!.resolve(answer(7));
    expect((await again).totalTokens).toBe(7);
  });
});

describe("file suggestions for @ mentions", () => {
  function rig(options: { answers?: string[][]; live?: boolean; disk?: string[] | Error; indexWaitMs?: number }) {
    const asked: string[] = [];
    const answers = [...(options.answers ?? [])];
    const runner = {
      control: async (request: { subtype: string; query?: string }) => {
        expect(request.subtype).toBe("file_suggestions");
        asked.push(request.query ?? "");
        const next = answers.length > 1 ? answers.shift()! : (answers[0] ?? []);
        return { suggestions: next.map((path) => ({ path })) };
      },
    };
    const hub = { onDidEmitEvent: () => () => undefined, liveRunner: async () => (options.live === false ? undefined : runner) };
    const searched: string[] = [];
    const controls = new SessionControls({
      hub,
      db: {},
      log: { warn: () => undefined },
      indexWaitMs: options.indexWaitMs ?? 200,
      searchNames: async (_id: string, q: string) => {
        searched.push(q);
        if (options.disk instanceof Error) throw options.disk;
        return options.disk ?? [];
      },
    } as unknown as SessionControlsDeps);
    return { controls, asked, searched };
  }

  it("asks the CLI again while its index is still being built (its first answers are empty)", async () => {
    const { controls, asked } = rig({ answers: [[], [], ["conduit-demo.md"]], indexWaitMs: 2_000 });
    const found = await controls.fileSuggestions("s1", "con");
    expect(found.suggestions).toEqual([{ path: "conduit-demo.md" }]);
    expect(asked).toEqual(["con", "con", "con"]);
  });

  it("adds the names on disk the CLI did not give, after the CLI's own ranking, once each", async () => {
    const { controls } = rig({ answers: [["src/conduit.ts"]], disk: ["conduit-demo.md", "src/conduit.ts", "docs/"] });
    expect((await controls.fileSuggestions("s1", "con")).suggestions.map((s) => s.path)).toEqual(["src/conduit.ts", "conduit-demo.md", "docs/"]);
  });

  it("finds a file on disk the CLI's index has not seen, within the wait", async () => {
    const { controls } = rig({ answers: [[]], disk: ["conduit-demo.md"], indexWaitMs: 100 });
    expect((await controls.fileSuggestions("s1", "con")).suggestions).toEqual([{ path: "conduit-demo.md" }]);
  });

  it("answers from disk with no live CLI; says the CLI is not running only when the disk cannot be searched either", async () => {
    expect((await rig({ live: false, disk: ["notes/conduit-demo.md"] }).controls.fileSuggestions("s1", "con")).suggestions).toEqual([
      { path: "notes/conduit-demo.md" },
    ]);
    await expect(rig({ live: false, disk: new Error("door down") }).controls.fileSuggestions("s1", "con")).rejects.toThrow("not running");
  });

  it("lists the CLI's top folder for an empty query without searching the disk or waiting", async () => {
    const { controls, asked, searched } = rig({ answers: [["src/", "README.md"]], disk: ["x"] });
    expect((await controls.fileSuggestions("s1", "")).suggestions.map((s) => s.path)).toEqual(["src/", "README.md"]);
    expect(asked).toEqual([""]);
    expect(searched).toEqual([]);
  });
});

describe("file suggestions once the CLI's index is built", () => {
  it("takes an empty answer at once (no wait for a query nothing matches)", async () => {
    const answers = [["conduit-demo.md"], []];
    let asks = 0;
    const runner = { control: async () => ({ suggestions: (answers[asks++] ?? []).map((path) => ({ path })) }) };
    const controls = new SessionControls({
      hub: { onDidEmitEvent: () => () => undefined, liveRunner: async () => runner },
      db: {},
      log: { warn: () => undefined },
      indexWaitMs: 5_000,
      searchNames: async () => [],
    } as unknown as SessionControlsDeps);
    expect((await controls.fileSuggestions("s1", "con")).suggestions).toHaveLength(1);
    const started = Date.now();
    expect((await controls.fileSuggestions("s1", "zzz")).suggestions).toEqual([]);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(asks).toBe(2);
  });
});
