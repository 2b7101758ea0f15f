// Session management against the real CLI and the scripted model: a rename reaches the live CLI
// (`rename_session` → `system/session_title_changed`) and the row; a background shell is listed by
// the CLI and stopped with `stop_task`; Stop the process leaves a session the next prompt resumes;
// archive, and delete (events and approvals gone, cost entries and reports kept). Each change audited.
import { existsSync } from "node:fs";
import path from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sumCost } from "@/server/db/cost-entries";
import { findSessionAccess } from "@/server/db/sessions";
import { callTool, say } from "@/server/model-server/scenario";
import { AppError } from "@/server/shared/errors/app-error";
import { setupGit } from "@/test/setup-git";
import { startCliEnv, type CliEnv } from "@/test/cli-env";
import { createSessionFixtures, type SessionFixtures } from "@/test/session-fixtures";
import { SessionHub } from "./session-hub";
import { SessionManagement } from "./session-management";
import { createSessionRunner } from "./session-runner";
import { until } from "@/test/until";

const log = pino({ level: "silent" });
let counter = 0;
const commandId = () => `manage-${++counter}-${Math.random().toString(36).slice(2, 10)}`;


describe("session management with the real CLI", () => {
  let cli: CliEnv;
  let fx: SessionFixtures;
  let hub: SessionHub;
  let manage: SessionManagement;

  beforeAll(async () => {
    cli = await startCliEnv();
    cli.server.addScenario("hello", [say("Hello there.")]);
    cli.server.addScenario("background", [
      callTool("Bash", { command: "sleep 120", description: "Wait in the background", run_in_background: true }),
      say("Started it."),
    ]);
    fx = await createSessionFixtures({ rootPath: cli.cwd });
    hub = new SessionHub({
      db: fx.db,
      createRunner: (options, decidePermission) =>
        createSessionRunner(options, { cliPath: cli.cliPath, decidePermission, baseEnv: cli.env }),
      configRoot: path.join(fx.dataDir, "claude-config"),
      sidecarId: "manage-it",
      log,
    });
    manage = new SessionManagement({ hub, db: fx.db, log });
  });

  afterAll(async () => {
    await hub?.close();
    await cli?.close();
    await fx?.close();
  });

  async function idle(sessionId: string): Promise<void> {
    await until(async () => (await hub.view(sessionId)).status === "idle", 30_000, "session idle");
  }

  async function startSession(mode: "default" | "acceptEdits" = "default"): Promise<string> {
    const view = await hub.createSession(
      fx.owner,
      { workspace: fx.workspace, role: "owner" },
      { mode, commandId: commandId() },
    );
    await idle(view.id);
    return view.id;
  }

  async function turn(sessionId: string, text: string): Promise<void> {
    const before = await fx.db.sessionEvent.count({
      where: { sessionId, kind: "cli", payload: { contains: '"type":"result"' } },
    });
    await hub.prompt(fx.owner, sessionId, text, commandId());
    await until(
      async () =>
        (await fx.db.sessionEvent.count({
          where: { sessionId, kind: "cli", payload: { contains: '"type":"result"' } },
        })) > before,
      30_000,
      "the turn's result",
    );
    await idle(sessionId);
  }

  const cliFrames = async (sessionId: string, contains: string) =>
    (
      await fx.db.sessionEvent.findMany({
        where: { sessionId, kind: "cli", payload: { contains } },
        orderBy: { seq: "asc" },
        select: { payload: true },
      })
    ).map((r) => JSON.parse(r.payload) as Record<string, unknown>);

  const audits = (sessionId: string) =>
    fx.db.auditLog.findMany({ where: { objectType: "session", objectId: sessionId }, orderBy: { at: "asc" } });

  it("renames a live session: the CLI confirms the title, the row and the audit log keep it", async () => {
    const sessionId = await startSession();
    await turn(sessionId, "[scenario:hello] hi");
    const result = await manage.rename(fx.editor, sessionId, "Release checklist");
    expect(result).toEqual({ title: "Release checklist", live: true });
    await until(async () => (await cliFrames(sessionId, "session_title_changed")).length > 0, 10_000, "title frame");
    expect((await cliFrames(sessionId, "session_title_changed"))[0]).toMatchObject({ title: "Release checklist" });
    expect((await hub.view(sessionId)).title).toBe("Release checklist");
    await until(
      async () => (await fx.db.session.findUniqueOrThrow({ where: { id: sessionId } })).title === "Release checklist",
      5_000,
      "row title",
    );
    const audit = (await audits(sessionId)).find((a) => a.action === "session.rename");
    expect(audit?.actorId).toBe(fx.editor.id);
    expect(JSON.parse(audit!.details!)).toMatchObject({ to: "Release checklist", live: true });

    // Stop the process: the session is stopped, a rename is stored without a CLI, the next prompt resumes
    await hub.stop(fx.owner, sessionId, commandId());
    await until(async () => (await hub.view(sessionId)).status === "stopped", 15_000, "stopped");
    expect(await manage.rename(fx.owner, sessionId, "Renamed while stopped")).toEqual({
      title: "Renamed while stopped",
      live: false,
    });
    await turn(sessionId, "[scenario:hello] again");
    const spawns = await fx.db.sessionEvent.findMany({
      where: { sessionId, kind: "process", payload: { contains: '"phase":"spawned"' } },
      select: { payload: true },
    });
    expect(spawns.map((s) => (JSON.parse(s.payload) as { resumed: boolean }).resumed)).toEqual([false, true]);
  });

  it("lists a background shell and stops it with stop_task", async () => {
    const sessionId = await startSession("acceptEdits");
    await turn(sessionId, "[scenario:background] go");
    await until(
      async () =>
        (await cliFrames(sessionId, "background_tasks_changed")).some(
          (f) => Array.isArray(f.tasks) && f.tasks.length === 1,
        ),
      15_000,
      "the task listed",
    );
    const listed = (await cliFrames(sessionId, "background_tasks_changed")).find(
      (f) => Array.isArray(f.tasks) && f.tasks.length === 1,
    )!;
    const task = (listed.tasks as { task_id: string; task_type: string }[])[0]!;
    expect(task.task_type).toBe("local_bash");
    const seen = (await cliFrames(sessionId, "background_tasks_changed")).length;
    await expect(manage.stopTask(fx.editor, sessionId, task.task_id)).resolves.toEqual({ stopped: true });
    await until(
      async () => {
        const frames = await cliFrames(sessionId, "background_tasks_changed");
        return frames.length > seen && (frames.at(-1)!.tasks as unknown[]).length === 0;
      },
      15_000,
      "the task gone from the CLI's list",
    );
    expect((await audits(sessionId)).map((a) => a.action)).toContain("session.stop-task");

    // with no live CLI there is nothing to stop: a clear refusal
    await hub.stop(fx.owner, sessionId, commandId());
    await until(async () => (await hub.view(sessionId)).status === "stopped", 15_000, "stopped");
    await expect(manage.stopTask(fx.editor, sessionId, task.task_id)).rejects.toMatchObject({ code: "conflict" });
  });

  it("archives, then deletes: events and approvals go, cost entries stay for the reports", async () => {
    const sessionId = await startSession();
    await turn(sessionId, "[scenario:hello] one");
    const cost = await sumCost(fx.db, { sessionId });
    expect(cost.results).toBe(1);
    await fx.db.approval.create({
      data: { sessionId, requestId: "req-1", toolName: "Bash", input: "{}", status: "allowed" },
    });

    expect(await manage.archive(fx.editor, sessionId, true)).toEqual({ archived: true });
    expect((await fx.db.session.findUniqueOrThrow({ where: { id: sessionId } })).archivedAt).not.toBeNull();
    expect(await manage.archive(fx.editor, sessionId, false)).toEqual({ archived: false });
    expect((await fx.db.session.findUniqueOrThrow({ where: { id: sessionId } })).archivedAt).toBeNull();

    await expect(manage.remove(fx.owner, sessionId, "not-this-one")).rejects.toMatchObject({ code: "invalid_payload" });
    expect(await fx.db.sessionEvent.count({ where: { sessionId } })).toBeGreaterThan(0);

    const pid = (await fx.db.session.findUniqueOrThrow({ where: { id: sessionId } })).pid;
    expect(pid).toBeGreaterThan(0);
    await manage.remove(fx.owner, sessionId, sessionId);
    // the process is gone, the conversation too; the row stays, hidden, with its cost
    expect(() => process.kill(pid!, 0)).toThrow();
    expect(await fx.db.sessionEvent.count({ where: { sessionId } })).toBe(0);
    expect(await fx.db.approval.count({ where: { sessionId } })).toBe(0);
    expect(await sumCost(fx.db, { sessionId })).toMatchObject({ results: 1, usd: cost.usd });
    expect(await sumCost(fx.db, { workspaceId: fx.workspace.id })).toMatchObject({ results: expect.any(Number) });
    expect(await findSessionAccess(fx.db, fx.owner.id, sessionId)).toBeUndefined();
    await expect(hub.view(sessionId)).rejects.toBeInstanceOf(AppError);
    await expect(manage.rename(fx.owner, sessionId, "ghost")).rejects.toMatchObject({ code: "not_found" });
    expect((await audits(sessionId)).map((a) => a.action)).toEqual([
      "session.archive",
      "session.unarchive",
      "session.delete",
    ]);
  });
});

describe("deleting a session that has its own git worktree", () => {
  let cli: CliEnv;
  let fx: SessionFixtures;
  let hub: SessionHub;
  const git = setupGit;

  beforeAll(async () => {
    cli = await startCliEnv({ files: { "notes.txt": "base\n" } });
    git(cli.cwd, "init", "-q");
    git(cli.cwd, "add", "-A");
    git(cli.cwd, "commit", "-q", "-m", "initial");
    fx = await createSessionFixtures({ rootPath: cli.cwd });
    hub = new SessionHub({
      db: fx.db,
      createRunner: (options, decidePermission) =>
        createSessionRunner(options, { cliPath: cli.cliPath, decidePermission, baseEnv: cli.env }),
      configRoot: path.join(fx.dataDir, "claude-config"),
      sidecarId: "manage-wt-it",
      log,
    });
  });

  afterAll(async () => {
    await hub?.close();
    await cli?.close();
    await fx?.close();
  });

  it("removes the worktree and its branch with the session", async () => {
    const view = await hub.createSession(
      fx.owner,
      { workspace: fx.workspace, role: "owner" },
      { mode: "default", worktree: true, commandId: commandId() },
    );
    const row = await fx.db.session.findUniqueOrThrow({
      where: { id: view.id },
      select: { worktreePath: true, worktreeBranch: true },
    });
    expect(existsSync(row.worktreePath!)).toBe(true);
    expect(git(cli.cwd, "branch", "--list", row.worktreeBranch!)).toContain(row.worktreeBranch!);

    await new SessionManagement({ hub, db: fx.db, log }).remove(fx.owner, view.id, view.id);
    expect(existsSync(row.worktreePath!)).toBe(false);
    expect(git(cli.cwd, "branch", "--list", row.worktreeBranch!)).toBe("");
    const audit = await fx.db.auditLog.findFirstOrThrow({ where: { objectId: view.id, action: "session.delete" } });
    expect(JSON.parse(audit.details!)).toMatchObject({ worktree: "removed" });
  });
});
