// Issue 12's Changes against the real CLI and the scripted model: an acceptEdits session edits a
// file and a Bash command rewrites another → both are in the turn's changes with exact
// before/after; a hunk is reverted; after three turns the workspace is rewound to before prompt 1
// (every file byte for byte as it was, the preview's counts what changed), a hand edit made
// meanwhile is reported as a conflict and left alone; viewers and outsiders are refused.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import pino from "pino";
import type { Socket } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listTurnChanges } from "@/server/db/turn-changes";
import { callTool, say } from "@/server/model-server/scenario";
import type { Ack } from "@/server/shared/wire/ack";
import type { RewindPreview, TakeBackResult } from "@/server/shared/wire/changes";
import type { SessionView } from "@/server/shared/wire/session";
import { filesScope, workspaceDoor, type DoorInput } from "@/server/workspace-agent";
import { createSessionRunner } from "@/server/sidecar/session/session-runner";
import { startCliEnv, type CliEnv } from "@/test/cli-env";
import { createSessionFixtures, type SessionFixtures } from "@/test/session-fixtures";
import { startTestSidecar, type TestSidecar } from "@/test/sidecar-fixture";
import { until as untilShared } from "@/test/until";

const log = pino({ level: process.env.TEST_LOG ?? "silent" });
let counter = 0;
const commandId = () => `chg-${++counter}-${Math.random().toString(36).slice(2, 10)}`;

/** The shared poll with this file's longer default (real turns with snapshots). */
const until = (check: () => boolean | Promise<boolean>, timeoutMs = 60_000, what = "condition") => untilShared(check, timeoutMs, what);

const original: Record<string, string> = {
  "notes.txt": "one\ntwo\nthree\n",
  "data.txt": "alpha\nbeta\n",
  "keep.txt": "keep me\n",
  "src/deep/mod.ts": "export const x = 1;\n",
};

describe("per-turn changes, revert and rewind (real CLI)", () => {
  let cli: CliEnv;
  let fx: SessionFixtures;
  let sidecar: TestSidecar;
  let owner: Socket;
  let sessionId: string;
  const promptSeqs: number[] = [];

  const command = <T,>(socket: Socket, name: string, payload: unknown) =>
    socket.timeout(60_000).emitWithAck(name, payload) as Promise<Ack<T>>;
  const file = (rel: string) => readFile(path.join(cli.cwd, rel), "utf8");
  const exists = (rel: string) => readFile(path.join(cli.cwd, rel)).then(() => true, () => false);
  /** A changes operation on the workspace's shadow repository, in the door the sidecar uses. */
  const door = async <K extends "changes.sides" | "changes.snapshot" | "changes.diff">(op: K, input: Omit<DoorInput<K>, "repoKey" | "workTree">) =>
    workspaceDoor().call(await filesScope({ id: fx.workspace.id, rootPath: cli.cwd }, fx.dataDir), op, {
      ...input,
      repoKey: fx.workspace.id,
      workTree: cli.cwd,
    } as DoorInput<K>);

  async function turn(text: string, turns: number): Promise<void> {
    const ack = await command<{ seq: number }>(owner, "session:prompt", { sessionId, text, commandId: commandId() });
    if (!ack.ok) throw new Error(ack.error.message);
    promptSeqs.push(ack.data.seq);
    await until(async () => (await listTurnChanges(fx.db, sessionId)).filter((t) => t.kind === "turn").length >= turns, 60_000, `turn ${turns} recorded`);
    await until(async () => (await sidecar.hub.view(sessionId)).status === "idle", 30_000, "idle");
  }

  beforeAll(async () => {
    cli = await startCliEnv({ files: { ...original, "node_modules/dep/index.js": "module.exports = 1;\n" } });
    cli.server.addScenario("t1", [
      callTool("Edit", { file_path: "notes.txt", old_string: "two", new_string: "TWO" }),
      callTool("Bash", { command: "printf 'alpha\\nBETA\\ngamma\\n' > data.txt && echo changed > node_modules/dep/index.js", description: "Rewrite data" }),
      say("Turn one done."),
    ]);
    cli.server.addScenario("t2", [
      callTool("Write", { file_path: "new.txt", content: "brand new\n" }),
      callTool("Bash", { command: "rm keep.txt && printf '\\000\\001\\002' > blob.bin", description: "Remove and add binary" }),
      say("Turn two done."),
    ]);
    cli.server.addScenario("t3", [
      callTool("Edit", { file_path: "notes.txt", old_string: "three", new_string: "three\nfour" }),
      callTool("Bash", { command: "echo 'export const x = 2;' > src/deep/mod.ts", description: "Change module" }),
      say("Turn three done."),
    ]);
    cli.server.addScenario("slow", [say("Slowly.", { delayMs: 3_000 })]);
    fx = await createSessionFixtures({ rootPath: cli.cwd });
    sidecar = await startTestSidecar(fx, {
      createRunner: (options, decidePermission) =>
        createSessionRunner(options, { cliPath: cli.cliPath, decidePermission, baseEnv: cli.env }),
      // acceptEdits lets the file tools through; Bash is asked, and allowed here
      decidePermission: async (_session, question) => ({ behavior: "allow", updatedInput: question.request.input as Record<string, never> }),
      snapshots: true,
      log,
    });
    owner = await sidecar.connect(fx.owner);
    const created = await command<SessionView>(owner, "session:create", {
      workspace: fx.workspace.slug,
      mode: "acceptEdits",
      commandId: commandId(),
    });
    if (!created.ok) throw new Error(created.error.message);
    sessionId = created.data.id;
    await until(async () => (await sidecar.hub.view(sessionId)).status === "idle", 30_000, "first child idle");
  }, 120_000);

  afterAll(async () => {
    await sidecar?.close();
    await cli?.close();
    await fx?.close();
  });

  it("records an Edit and a Bash rewrite of one turn with exact before and after", async () => {
    await turn("[scenario:t1] go", 1);
    const [step] = await listTurnChanges(fx.db, sessionId);
    expect(step).toMatchObject({ kind: "turn", status: "ok", promptSeq: promptSeqs[0] });
    expect(step!.files).toEqual([
      { path: "data.txt", status: "modified", insertions: 2, deletions: 1, binary: false, large: false },
      { path: "notes.txt", status: "modified", insertions: 1, deletions: 1, binary: false, large: false },
    ]);
    // the after-snapshot came from the watcher's paths (change-watcher.ts, in the door), not from a scan
    expect(sidecar.snapshots!.lastWayOf(fx.workspace.id)).toBe("paths");
    const sides = (rel: string) => door("changes.sides", { before: step!.beforeCommit!, after: step!.afterCommit!, file: rel });
    expect(await sides("data.txt")).toEqual({ before: { kind: "text", content: "alpha\nbeta\n" }, after: { kind: "text", content: "alpha\nBETA\ngamma\n" } });
    expect(await sides("notes.txt")).toEqual({ before: { kind: "text", content: "one\ntwo\nthree\n" }, after: { kind: "text", content: "one\nTWO\nthree\n" } });
    // node_modules is never snapshotted, and the workspace has no .git of Conduit's
    expect((await sides("node_modules/dep/index.js")).after).toEqual({ kind: "absent" });
    expect(await exists(".git/HEAD")).toBe(false);
  }, 90_000);

  it("lists deletions, additions and binary files of later turns", async () => {
    await turn("[scenario:t2] go", 2);
    await turn("[scenario:t3] go", 3);
    const steps = (await listTurnChanges(fx.db, sessionId)).filter((t) => t.kind === "turn");
    expect(steps[1]!.files).toEqual([
      { path: "blob.bin", status: "added", insertions: 0, deletions: 0, binary: true, large: false },
      { path: "keep.txt", status: "deleted", insertions: 0, deletions: 1, binary: false, large: false },
      { path: "new.txt", status: "added", insertions: 1, deletions: 0, binary: false, large: false },
    ]);
    expect(steps[2]!.files.map((f) => [f.path, f.status, f.insertions, f.deletions])).toEqual([
      ["notes.txt", "modified", 1, 0],
      ["src/deep/mod.ts", "modified", 1, 1],
    ]);
  }, 120_000);

  it("refuses viewers and outsiders, and a take-back while a turn runs", async () => {
    const [first] = await listTurnChanges(fx.db, sessionId);
    const viewer = await sidecar.connect(fx.viewer);
    const outsider = await sidecar.connect(fx.outsider);
    const payload = { sessionId, scope: { turn: first!.id }, path: "notes.txt", commandId: commandId() };
    expect(await command(viewer, "changes:revert-file", payload)).toMatchObject({ ok: false, error: { code: "forbidden" } });
    expect(await command(outsider, "changes:revert-file", { ...payload, commandId: commandId() })).toMatchObject({ ok: false, error: { code: "not_found" } });
    expect(await command(viewer, "session:rewind", { sessionId, promptSeq: 1, commandId: commandId() })).toMatchObject({ ok: false, error: { code: "forbidden" } });

    const slow = command(owner, "session:prompt", { sessionId, text: "[scenario:slow] wait", commandId: commandId() });
    await until(async () => (await sidecar.hub.view(sessionId)).status === "running", 10_000, "running");
    const refused = await command(owner, "session:rewind", { sessionId, promptSeq: promptSeqs[0], confirm: true, commandId: commandId() });
    expect(refused).toMatchObject({ ok: false, error: { code: "conflict", message: expect.stringContaining("A turn is running") } });
    const ack = await slow;
    if (ack.ok) promptSeqs.push((ack.data as { seq: number }).seq);
    await until(async () => (await listTurnChanges(fx.db, sessionId)).filter((t) => t.kind === "turn").length >= 4, 30_000, "slow turn recorded");
    await until(async () => (await sidecar.hub.view(sessionId)).status === "idle", 30_000, "idle");
  }, 60_000);

  it("reverts one hunk of turn one on the text as it is now", async () => {
    const [first] = await listTurnChanges(fx.db, sessionId);
    expect(await file("notes.txt")).toBe("one\nTWO\nthree\nfour\n");
    const ack = await command<TakeBackResult>(owner, "changes:revert-hunk", {
      sessionId,
      scope: { turn: first!.id },
      path: "notes.txt",
      hunk: 0,
      commandId: commandId(),
    });
    expect(ack).toMatchObject({ ok: true, data: { changed: ["notes.txt"] } });
    expect(await file("notes.txt")).toBe("one\ntwo\nthree\nfour\n");
    const audit = await fx.db.auditLog.findMany({ where: { objectId: sessionId, action: "session.revert-hunk" } });
    expect(audit).toHaveLength(1);
  }, 30_000);

  it("reverts a file the session added: it goes away", async () => {
    const second = (await listTurnChanges(fx.db, sessionId)).filter((t) => t.kind === "turn")[1];
    const ack = await command<TakeBackResult>(owner, "changes:revert-file", {
      sessionId,
      scope: { turn: second!.id },
      path: "new.txt",
      commandId: commandId(),
    });
    expect(ack).toMatchObject({ ok: true, data: { changed: ["new.txt"] } });
    expect(await exists("new.txt")).toBe(false);
    // not a file of that change: refused, nothing written
    const other = await command(owner, "changes:revert-file", { sessionId, scope: { turn: second!.id }, path: "notes.txt", commandId: commandId() });
    expect(other).toMatchObject({ ok: false, error: { code: "not_found" } });
  }, 30_000);

  it("rewinds to before prompt 1: a preview with exact counts, conflicts left alone, every other file byte for byte", async () => {
    // a person edits data.txt by hand after the session's last turn: a conflict
    await writeFile(path.join(cli.cwd, "data.txt"), "hand edit\n");
    const preview = await command<RewindPreview>(owner, "session:rewind", { sessionId, promptSeq: promptSeqs[0], commandId: commandId() });
    if (!preview.ok) throw new Error(preview.error.message);
    expect(preview.data.conflicts).toEqual(["data.txt"]);
    expect(preview.data.files.map((f) => [f.path, f.status, f.insertions, f.deletions])).toEqual([
      ["blob.bin", "deleted", 0, 0],
      // hand edit → alpha, beta
      ["data.txt", "modified", 2, 1],
      ["keep.txt", "added", 1, 0],
      // one two three four → one two three
      ["notes.txt", "modified", 0, 1],
      ["src/deep/mod.ts", "modified", 1, 1],
    ]);
    expect(preview.data).toMatchObject({ insertions: 4, deletions: 3 });
    // a dry run changes nothing
    expect(await exists("blob.bin")).toBe(true);

    const done = await command<TakeBackResult>(owner, "session:rewind", {
      sessionId,
      promptSeq: promptSeqs[0],
      confirm: true,
      commandId: commandId(),
    });
    expect(done).toMatchObject({ ok: true, data: { skipped: ["data.txt"] } });
    expect(await file("data.txt")).toBe("hand edit\n");
    for (const [rel, text] of Object.entries(original)) {
      if (rel === "data.txt") continue;
      expect(await readFile(path.join(cli.cwd, rel))).toEqual(Buffer.from(text));
    }
    expect(await exists("new.txt")).toBe(false);
    expect(await exists("blob.bin")).toBe(false);

    // confirmed with the conflict included, the hand edit goes too
    const again = await command<TakeBackResult>(owner, "session:rewind", {
      sessionId,
      promptSeq: promptSeqs[0],
      confirm: true,
      includeConflicts: true,
      commandId: commandId(),
    });
    expect(again).toMatchObject({ ok: true, data: { changed: ["data.txt"], skipped: [] } });
    expect(await file("data.txt")).toBe(original["data.txt"]);

    const events = await fx.db.sessionEvent.findMany({ where: { sessionId, kind: { in: ["rewind", "changes"] } }, orderBy: { seq: "asc" } });
    expect(events.filter((e) => e.kind === "changes")).toHaveLength(4);
    expect(events.filter((e) => e.kind === "rewind")).toHaveLength(2);
    expect(await fx.db.auditLog.count({ where: { objectId: sessionId, action: "session.rewind" } })).toBe(2);
  }, 60_000);

  it("snapshots a file in a new folder; an unchanged tree is the same snapshot", async () => {
    await mkdir(path.join(cli.cwd, "later"), { recursive: true });
    // through the door as the sidecar's snapshots go (the same watchers: the default limits)
    const snapshot = () => door("changes.snapshot", { watch: {}, message: "test" });
    const a = await snapshot();
    expect((await snapshot()).commit).toBe(a.commit);
    await writeFile(path.join(cli.cwd, "later", "x.txt"), "x\n");
    const b = await snapshot();
    expect(b.way).toBe("paths");
    expect(await door("changes.diff", { from: a.commit, to: b.commit })).toEqual([
      { path: "later/x.txt", status: "added", insertions: 1, deletions: 0, binary: false, large: false },
    ]);
  });
});
