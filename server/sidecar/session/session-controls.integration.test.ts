// The session controls through the socket, against the real CLI and the scripted model: the
// model list and a switch mid-session, context usage, file suggestions, slash commands, the
// thinking budget, a queued prompt cancelled before it starts, and an image prompt that reaches
// the model as an image block. Roles: members read, editors change, outsiders learn nothing.
import { deflateSync } from "node:zlib";
import pino from "pino";
import type { Socket } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listSessionEvents } from "@/server/db/session-events";
import { say } from "@/server/model-server/scenario";
import type { Ack } from "@/server/shared/wire/ack";
import { onSessionEvents, type CommandAccepted, type SessionView, type WireEvent } from "@/server/shared/wire/session";
import type {
  CancelQueuedResult,
  ContextUsage,
  FileSuggestions,
  ModelList,
  SetThinkingResult,
  SlashCommandList,
} from "@/server/shared/wire/session-controls";
import { createSessionRunner } from "@/server/sidecar/session/session-runner";
import { startCliEnv, type CliEnv } from "@/test/cli-env";
import { createSessionFixtures, type SessionFixtures } from "@/test/session-fixtures";
import { startTestSidecar, type TestSidecar } from "@/test/sidecar-fixture";
import { until } from "@/test/until";

let counter = 0;
const commandId = () => `ctl-${++counter}-${Math.random().toString(36).slice(2, 10)}`;

function ask<T>(socket: Socket, name: string, payload: unknown): Promise<Ack<T>> {
  return socket.timeout(60_000).emitWithAck(name, payload) as Promise<Ack<T>>;
}


/** A real 2×2 PNG (signature, IHDR, IDAT, IEND with their CRCs). */
function tinyPng(): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (buf: Buffer) => {
    let c = 0xffffffff;
    for (const b of buf) c = crcTable[(c ^ b) & 0xff]! ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
    const out = Buffer.alloc(12 + data.length);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc(body), 8 + data.length);
    return out;
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(2, 0);
  ihdr.writeUInt32BE(2, 4);
  ihdr[8] = 8;
  ihdr[9] = 2;
  const raw = Buffer.from([0, 255, 0, 0, 0, 255, 0, 0, 0, 0, 255, 255, 255, 255]);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    chunk("IDAT", deflateSync(raw)),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

describe("session controls with the real CLI", () => {
  let cli: CliEnv;
  let fx: SessionFixtures;
  let sidecar: TestSidecar;
  let owner: Socket;
  let viewer: Socket;
  let outsider: Socket;
  let sessionId: string;
  const events: WireEvent[] = [];

  beforeAll(async () => {
    cli = await startCliEnv({ files: { "src/hello-world.ts": "export {};\n", "docs/guide.md": "# guide\n" } });
    const chunks = Array.from({ length: 40 }, (_, i) => `word${i} `);
    cli.server.addScenario("slow", [say(chunks.join(""), { chunks, chunkDelayMs: 100 })]);
    fx = await createSessionFixtures({ rootPath: cli.cwd });
    sidecar = await startTestSidecar(fx, {
      createRunner: (options, decidePermission) =>
        createSessionRunner(options, { cliPath: cli.cliPath, decidePermission, baseEnv: cli.env }),
      log: pino({ level: "silent" }),
    });
    [owner, viewer, outsider] = await Promise.all([
      sidecar.connect(fx.owner),
      sidecar.connect(fx.viewer),
      sidecar.connect(fx.outsider),
    ]);
    onSessionEvents(owner, (e) => events.push(e));
    const created = await ask<SessionView>(owner, "session:create", {
      workspace: fx.workspace.slug,
      mode: "default",
      commandId: commandId(),
    });
    if (!created.ok) throw new Error(created.error.message);
    sessionId = created.data.id;
    const sub = await ask(owner, "session:subscribe", { sessionId, afterSeq: 0 });
    if (!sub.ok) throw new Error(sub.error.message);
    await until(async () => (await sidecar.hub.liveRunner(sessionId)) !== undefined, 30_000, "a live CLI");
  }, 60_000);

  afterAll(async () => {
    await sidecar?.close();
    await cli?.close();
    await fx?.close();
  });

  async function turn(text: string): Promise<void> {
    const before = events.filter((e) => e.kind === "cli" && (e.payload as { type?: string }).type === "result").length;
    const ack = await ask<CommandAccepted>(owner, "session:prompt", { sessionId, text, commandId: commandId() });
    if (!ack.ok) throw new Error(ack.error.message);
    await until(
      () => events.filter((e) => e.kind === "cli" && (e.payload as { type?: string }).type === "result").length > before,
      60_000,
      "the turn's result",
    );
  }

  it("lists the CLI's models to any member, and to no outsider", async () => {
    const list = await ask<ModelList>(viewer, "session:list-models", { sessionId });
    expect(list.ok).toBe(true);
    if (!list.ok) return;
    expect(list.data.source).toBe("cli");
    expect(list.data.models.map((m) => m.value)).toEqual(expect.arrayContaining(["default", "sonnet"]));
    expect(list.data.models.every((m) => m.displayName.length > 0)).toBe(true);
    // the new-session form's catalog: the list any CLI gave, by workspace
    const catalog = await ask<ModelList>(viewer, "models:list", { workspace: fx.workspace.slug });
    expect(catalog).toMatchObject({ ok: true, data: { source: "cache" } });
    expect(await ask(outsider, "session:list-models", { sessionId })).toMatchObject({
      ok: false,
      error: { code: "not_found" },
    });
    expect(await ask(outsider, "models:list", { workspace: fx.workspace.slug })).toMatchObject({
      ok: false,
      error: { code: "not_found" },
    });
  });

  it("switches the model mid-session: the CLI confirms and the next turn asks the model for it", async () => {
    const list = await ask<ModelList>(owner, "session:list-models", { sessionId });
    const sonnet = list.ok ? list.data.models.find((m) => m.value === "sonnet") : undefined;
    expect(sonnet?.resolvedModel).toBeTruthy();
    const ack = await ask<{ seq: number; model: string }>(owner, "session:set-model", {
      sessionId,
      model: "sonnet",
      commandId: commandId(),
    });
    expect(ack).toMatchObject({ ok: true });
    const from = cli.server.requests.length;
    await turn("[scenario:none] which model answers?");
    const asked = cli.server.requests.slice(from).filter((r) => r.kind === "messages" && r.toolNames.length > 0);
    expect(asked.at(-1)?.model).toBe(sonnet?.resolvedModel);
    // the switch is in the log as the owner's command
    const logged = (await listSessionEvents(fx.db, sessionId, 0)).find((e) => e.kind === "set-model");
    expect(logged).toMatchObject({ userId: fx.owner.id });
  });

  it("reports context usage with used and max tokens by category", async () => {
    const usage = await ask<ContextUsage>(viewer, "session:context-usage", { sessionId });
    expect(usage.ok).toBe(true);
    if (!usage.ok) return;
    expect(usage.data.maxTokens).toBeGreaterThan(0);
    expect(usage.data.totalTokens).toBeGreaterThan(0);
    expect(usage.data.percentage).toBeGreaterThanOrEqual(0);
    expect(usage.data.percentage).toBeLessThanOrEqual(100);
    expect(usage.data.categories.map((c) => c.name)).toEqual(expect.arrayContaining(["Messages"]));
  });

  it("suggests workspace files for @ mentions (fuzzy)", async () => {
    let found: FileSuggestions | undefined;
    // The CLI builds its file index in the background on the first request.
    await until(
      async () => {
        const ack = await ask<FileSuggestions>(viewer, "session:file-suggestions", { sessionId, query: "helwor" });
        found = ack.ok ? ack.data : undefined;
        return (found?.suggestions.length ?? 0) > 0;
      },
      20_000,
      "file suggestions",
    );
    expect(found?.suggestions.map((s) => s.path)).toContain("src/hello-world.ts");
    const top = await ask<FileSuggestions>(viewer, "session:file-suggestions", { sessionId, query: "" });
    expect(top.ok && top.data.suggestions.map((s) => s.path)).toEqual(expect.arrayContaining(["src/", "docs/"]));
  });

  it("finds a file put on disk just now on the first ask, though the CLI's index has not seen it", async () => {
    const { mkdir, writeFile } = await import("node:fs/promises");
    const { join } = await import("node:path");
    await mkdir(join(cli.cwd, "notes"), { recursive: true });
    await writeFile(join(cli.cwd, "notes", "conduit-demo.md"), "# demo\n");
    const ack = await ask<FileSuggestions>(viewer, "session:file-suggestions", { sessionId, query: "conduit-d" });
    expect(ack.ok && ack.data.suggestions.map((s) => s.path)).toContain("notes/conduit-demo.md");
  });

  it("lists the slash commands with descriptions", async () => {
    const ack = await ask<SlashCommandList>(viewer, "session:slash-commands", { sessionId });
    expect(ack.ok).toBe(true);
    if (!ack.ok) return;
    const compact = ack.data.commands.find((c) => c.name === "compact");
    expect(compact?.description).toBeTruthy();
    expect(ack.data.commands.every((c) => !c.name.startsWith("__"))).toBe(true);
  });

  it("sets the thinking budget for editors, not viewers", async () => {
    expect(
      await ask(viewer, "session:set-thinking", { sessionId, maxThinkingTokens: 2000, commandId: commandId() }),
    ).toMatchObject({ ok: false, error: { code: "forbidden" } });
    const id = commandId();
    const ack = await ask<SetThinkingResult>(owner, "session:set-thinking", { sessionId, maxThinkingTokens: 8000, commandId: id });
    expect(ack).toMatchObject({ ok: true, data: { maxThinkingTokens: 8000 } });
    // a retry is answered with the first outcome, and logs nothing more
    const again = await ask<SetThinkingResult>(owner, "session:set-thinking", { sessionId, maxThinkingTokens: 8000, commandId: id });
    expect(again).toEqual(ack);
    const logged = (await listSessionEvents(fx.db, sessionId, 0)).filter((e) => e.kind === "set-thinking");
    expect(logged).toHaveLength(1);
  });

  it("the thinking budget reaches a fixed-budget model, and a new CLI of the session gets it again", async () => {
    const thinkingOf = (body: unknown) => JSON.stringify((body as { thinking?: unknown }).thinking ?? null);
    // Adaptive models (the list's supportsAdaptiveThinking: the default, "sonnet") ignore the budget
    // in this CLI build; an older model takes it as budget_tokens.
    const list = await ask<ModelList>(owner, "session:list-models", { sessionId });
    expect(list.ok && list.data.models.find((m) => m.value === "sonnet")?.adaptiveThinking).toBe(true);
    expect(
      await ask(owner, "session:set-model", { sessionId, model: "claude-sonnet-4-5", commandId: commandId() }),
    ).toMatchObject({ ok: true });
    let from = cli.server.requests.length;
    await turn("[scenario:none] think a little");
    const before = cli.server.requests.slice(from).filter((r) => r.kind === "messages" && r.toolNames.length > 0);
    expect(thinkingOf(before.at(-1)?.body)).toContain('"budget_tokens":8000');
    // a new child: stopped, then started again by the next prompt
    expect(await ask(owner, "session:stop", { sessionId, commandId: commandId() })).toMatchObject({ ok: true });
    from = cli.server.requests.length;
    await turn("[scenario:none] still thinking?");
    const after = cli.server.requests.slice(from).filter((r) => r.kind === "messages" && r.toolNames.length > 0);
    expect(after.at(-1)?.model).toBe("claude-sonnet-4-5");
    expect(thinkingOf(after.at(-1)?.body)).toContain('"budget_tokens":8000');
  });

  it("cancels a queued prompt before it starts: the model never sees it", async () => {
    const from = cli.server.requests.length;
    const first = await ask<CommandAccepted>(owner, "session:prompt", {
      sessionId,
      text: "[scenario:slow] talk slowly",
      commandId: commandId(),
    });
    if (!first.ok) throw new Error(first.error.message);
    await until(
      () => events.some((e) => e.seq > first.data.seq && (e.payload as { type?: string }).type === "stream_event"),
      30_000,
      "streaming",
    );
    const queued = await ask<CommandAccepted>(owner, "session:prompt", {
      sessionId,
      text: "[scenario:none] never-asked-marker",
      commandId: commandId(),
    });
    if (!queued.ok) throw new Error(queued.error.message);
    const prompt = events.find((e) => e.seq === queued.data.seq);
    const uuid = (prompt?.payload as { uuid?: string } | undefined)?.uuid;
    await until(
      () =>
        events.some((e) => {
          const p = e.payload as { type?: string; command_uuid?: string; state?: string };
          return p.type === "command_lifecycle" && p.command_uuid === uuid && p.state === "queued";
        }),
      10_000,
      "queued",
    );
    expect(
      await ask(viewer, "session:cancel-queued", { sessionId, promptSeq: queued.data.seq, commandId: commandId() }),
    ).toMatchObject({ ok: false, error: { code: "forbidden" } });
    const cancel = await ask<CancelQueuedResult>(owner, "session:cancel-queued", {
      sessionId,
      promptSeq: queued.data.seq,
      commandId: commandId(),
    });
    expect(cancel).toMatchObject({ ok: true, data: { cancelled: true } });
    await until(
      () =>
        events.some((e) => {
          const p = e.payload as { type?: string; command_uuid?: string; state?: string };
          return p.type === "command_lifecycle" && p.command_uuid === uuid && p.state === "cancelled";
        }),
      10_000,
      "the CLI's cancelled lifecycle",
    );
    await until(async () => (await sidecar.hub.view(sessionId)).status === "idle", 30_000, "idle");
    await new Promise((r) => setTimeout(r, 500));
    const seen = cli.server.requests.slice(from).some((r) => JSON.stringify(r.body).includes("never-asked-marker"));
    expect(seen).toBe(false);
    // a prompt that is not a prompt event cannot be cancelled
    expect(
      await ask(owner, "session:cancel-queued", { sessionId, promptSeq: 1, commandId: commandId() }),
    ).toMatchObject({ ok: false, error: { code: "not_found" } });
  });

  it("sends a pasted image as an image block, stores it, and refuses what is not the image it claims", async () => {
    const png = tinyPng();
    const from = cli.server.requests.length;
    const ack = await ask<CommandAccepted>(owner, "session:prompt", {
      sessionId,
      text: "[scenario:none] what is in this picture?",
      images: [{ mediaType: "image/png", data: png.toString("base64"), name: "dot.png" }],
      commandId: commandId(),
    });
    expect(ack.ok).toBe(true);
    if (!ack.ok) return;
    await until(
      () => cli.server.requests.slice(from).some((r) => r.kind === "messages" && r.images.length > 0),
      30_000,
      "the model request with the image",
    );
    const request = cli.server.requests.slice(from).find((r) => r.kind === "messages" && r.images.length > 0);
    expect(request?.images.at(-1)).toEqual({ mediaType: "image/png", bytes: png.byteLength });
    const event = (await listSessionEvents(fx.db, sessionId, 0)).find((e) => e.seq === ack.data.seq);
    const payload = JSON.parse(event!.payload) as { images: { id: string; mediaType: string; bytes: number }[] };
    expect(payload.images).toEqual([{ id: expect.any(String), mediaType: "image/png", bytes: png.byteLength, name: "dot.png" }]);
    const row = await fx.db.promptImage.findUnique({ where: { id: payload.images[0]!.id } });
    expect(Buffer.from(row!.data).equals(png)).toBe(true);
    // the event carries a reference, never the bytes
    expect(event!.payload).not.toContain(png.toString("base64").slice(0, 40));

    const fake = await ask(owner, "session:prompt", {
      sessionId,
      text: "not really a png",
      images: [{ mediaType: "image/png", data: Buffer.from("GIF89a-not-png").toString("base64").padEnd(24, "A") }],
      commandId: commandId(),
    });
    expect(fake).toMatchObject({ ok: false, error: { code: "invalid_payload" } });
    const tooMany = await ask(owner, "session:prompt", {
      sessionId,
      text: "many",
      images: Array.from({ length: 21 }, () => ({ mediaType: "image/png", data: png.toString("base64") })),
      commandId: commandId(),
    });
    expect(tooMany).toMatchObject({ ok: false, error: { code: "invalid_payload", message: expect.stringContaining("20") } });
    await until(async () => (await sidecar.hub.view(sessionId)).status === "idle", 30_000, "idle");
  });
});
