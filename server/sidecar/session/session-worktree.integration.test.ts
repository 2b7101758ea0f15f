// A session in its own git worktree, with the real CLI and the scripted model: the worktree and
// branch exist before the spawn, the CLI's Write lands in the worktree and not in the main
// checkout, the branch merges back; a conflicting merge is reported and aborted; a workspace
// that is not a repository refuses the creation and leaves no session behind.
import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callTool, say } from "@/server/model-server/scenario";
import {
  gitScope,
  setWorkspaceDoor,
  workspaceDoor,
  WorktreeConflictError,
  type SessionWorktree,
} from "@/server/workspace-agent";
import { setupGit } from "@/test/setup-git";
import { startCliEnv, type CliEnv } from "@/test/cli-env";
import { createSessionFixtures, type SessionFixtures } from "@/test/session-fixtures";
import { SessionHub } from "./session-hub";
import { createSessionRunner } from "./session-runner";
import { releaseSessionWorktree } from "./session-worktree-start";
import { TurnSnapshots } from "./turn-snapshots";
import { until } from "@/test/until";

const log = pino({ level: "silent" });
let counter = 0;
const commandId = () => `wt-${++counter}-${Math.random().toString(36).slice(2, 10)}`;

describe("sessions in their own git worktree, real CLI", () => {
  let cli: CliEnv;
  let fx: SessionFixtures;
  let hub: SessionHub;
  const git = setupGit;

  beforeAll(async () => {
    cli = await startCliEnv({ files: { "notes.txt": "base\n", "shared.txt": "line one\n" } });
    cli.server.addScenario("write-notes", [
      callTool("Write", { file_path: "notes.txt", content: "from the session\n" }),
      say("Wrote it."),
    ]);
    cli.server.addScenario("write-shared", [
      callTool("Write", { file_path: "shared.txt", content: "session's line\n" }),
      say("Wrote shared."),
    ]);
    git(cli.cwd, "init", "-q");
    git(cli.cwd, "add", "-A");
    git(cli.cwd, "commit", "-q", "-m", "initial");
    fx = await createSessionFixtures({ rootPath: cli.cwd });
    hub = new SessionHub({
      db: fx.db,
      createRunner: (options, decidePermission) =>
        createSessionRunner(options, { cliPath: cli.cliPath, decidePermission, baseEnv: cli.env }),
      configRoot: path.join(fx.dataDir, "claude-config"),
      sidecarId: "worktree-it",
      log,
      // A generous wait: these tests check what a turn changed, not how long a loaded machine takes to hash the work tree.
      turnSnapshots: new TurnSnapshots({ db: fx.db, dataDir: fx.dataDir, log, beforeWaitMs: 20_000 }),
    });
  });

  afterAll(async () => {
    workspaceDoor().close();
    setWorkspaceDoor(undefined);
    await hub?.close();
    await cli?.close();
    await fx?.close();
  });

  /** The workspace's git door (what the web app's worktree routes call). */
  const door = async () => gitScope({ id: fx.workspace.id, rootPath: cli.cwd, excluded: [] });

  async function worktreeSession(): Promise<{ id: string; wt: SessionWorktree }> {
    const view = await hub.createSession(
      fx.owner,
      { workspace: fx.workspace, role: "owner" },
      { mode: "acceptEdits", worktree: true, commandId: commandId() },
    );
    const row = await fx.db.session.findUniqueOrThrow({
      where: { id: view.id },
      select: { worktreePath: true, worktreeBranch: true, baseBranch: true },
    });
    expect(row.worktreePath).toBe(path.join(cli.cwd, ".conduit", "worktrees", row.worktreePath!.split("/").pop()!));
    expect(row.worktreeBranch).toMatch(/^conduit\/[A-Za-z0-9]+$/);
    expect(row.baseBranch).toBe("main");
    await until(async () => (await hub.view(view.id)).status === "idle", 30_000, "first child idle");
    return { id: view.id, wt: { path: row.worktreePath!, branch: row.worktreeBranch!, baseBranch: row.baseBranch! } };
  }

  async function turn(sessionId: string, text: string): Promise<void> {
    const before = await fx.db.sessionEvent.count({ where: { sessionId, payload: { contains: '"type":"result"' } } });
    await hub.prompt(fx.owner, sessionId, text, commandId());
    await until(
      async () =>
        (await fx.db.sessionEvent.count({ where: { sessionId, payload: { contains: '"type":"result"' } } })) > before,
      60_000,
      "the turn's result",
    );
  }

  it("writes into the worktree, not the main checkout, and merges back", async () => {
    const { id, wt } = await worktreeSession();
    expect((await stat(path.join(wt.path, ".git"))).isFile()).toBe(true);
    await turn(id, "[scenario:write-notes] write the notes");
    expect(await readFile(path.join(wt.path, "notes.txt"), "utf8")).toBe("from the session\n");
    expect(await readFile(path.join(cli.cwd, "notes.txt"), "utf8")).toBe("base\n");
    // the main checkout is clean: the worktree folder is excluded
    expect(git(cli.cwd, "status", "--porcelain").trim()).toBe("");
    expect(await workspaceDoor().call(await door(), "git.worktree.changes", { wt })).toEqual([{ path: "notes.txt", status: "modified" }]);
    // the Changes tab's record of the turn is the worktree's, not the main checkout's (which skips .conduit)
    await until(
      async () =>
        (await fx.db.turnChange.count({ where: { sessionId: id, kind: "turn", afterCommit: { not: null } } })) > 0,
      30_000,
      "the turn's changes recorded",
    );
    const recorded = await fx.db.turnChange.findFirstOrThrow({
      where: { sessionId: id, kind: "turn", afterCommit: { not: null } },
    });
    expect(recorded.status).toBe("ok");
    expect((JSON.parse(recorded.files) as { path: string; status: string }[]).map((f) => [f.path, f.status])).toEqual([
      ["notes.txt", "modified"],
    ]);
    await hub.stop(fx.owner, id, commandId());
    await workspaceDoor().call(await door(), "git.worktree.merge", {
      wt,
      strategy: "merge",
      who: { name: fx.owner.name, email: "olga@example.test" },
      sessionId: id,
    });
    expect(await readFile(path.join(cli.cwd, "notes.txt"), "utf8")).toBe("from the session\n");
    expect(git(cli.cwd, "log", "-2", "--format=%an|%s").trim().split("\n")).toEqual([
      `${fx.owner.name}|Merge ${wt.branch} (session ${id})`,
      `${fx.owner.name}|Session ${id}: work in its worktree`,
    ]);
    // what the session-delete code calls: the worktree and branch go, the row says so
    await releaseSessionWorktree(fx.db, id);
    await expect(stat(wt.path)).rejects.toThrow();
    expect(git(cli.cwd, "branch", "--list", wt.branch).trim()).toBe("");
    expect(
      (await fx.db.session.findUniqueOrThrow({ where: { id }, select: { worktreeClosedAt: true } })).worktreeClosedAt,
    ).toBeInstanceOf(Date);
    await releaseSessionWorktree(fx.db, id);
  });

  it("reports a conflicting merge, aborts it, and keeps both sides", async () => {
    const { id, wt } = await worktreeSession();
    await turn(id, "[scenario:write-shared] change the shared file");
    expect(await readFile(path.join(wt.path, "shared.txt"), "utf8")).toBe("session's line\n");
    await writeFile(path.join(cli.cwd, "shared.txt"), "main's line\n");
    git(cli.cwd, "commit", "-q", "-am", "main changes shared");
    const head = git(cli.cwd, "rev-parse", "HEAD").trim();
    const attempt = workspaceDoor().call(await door(), "git.worktree.merge", {
      wt,
      strategy: "merge",
      who: { name: "Olga", email: "olga@example.test" },
      sessionId: id,
    });
    await expect(attempt).rejects.toBeInstanceOf(WorktreeConflictError);
    await expect(attempt).rejects.toMatchObject({ conflicts: ["shared.txt"] });
    expect(git(cli.cwd, "rev-parse", "HEAD").trim()).toBe(head);
    expect(git(cli.cwd, "status", "--porcelain").trim()).toBe("");
    expect(await readFile(path.join(cli.cwd, "shared.txt"), "utf8")).toBe("main's line\n");
    expect(git(cli.cwd, "show", `${wt.branch}:shared.txt`)).toBe("session's line\n");
  });

  it("refuses a worktree session where the workspace is not a repository, leaving no session", async () => {
    const plain = path.join(fx.dataDir, "plain-ws");
    await mkdir(plain, { recursive: true });
    const ws = await fx.db.workspace.create({
      data: { name: "Plain", slug: "plain", rootPath: plain },
      select: { id: true, slug: true, rootPath: true, allowBypass: true, defaultMode: true },
    });
    const before = await fx.db.session.count({ where: { workspaceId: ws.id } });
    await expect(
      hub.createSession(
        fx.owner,
        { workspace: ws, role: "owner" },
        { mode: "default", worktree: true, commandId: commandId() },
      ),
    ).rejects.toMatchObject({
      code: "conflict",
      message: "This workspace is not a git repository.",
    });
    expect(await fx.db.session.count({ where: { workspaceId: ws.id } })).toBe(before);
  });
});
