import { execFileSync } from "node:child_process";
import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import pino from "pino";
import type { Socket } from "socket.io-client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { findStreamedPlan } from "@/server/db/approvals";
import { listSessionEvents } from "@/server/db/session-events";
import { callTool, say, type Step } from "@/server/model-server/scenario";
import type { Ack } from "@/server/shared/wire/ack";
import type { ApprovalList, ApprovalResolved, ApprovalView, Decision } from "@/server/shared/wire/approval";
import type { SessionView } from "@/server/shared/wire/session";
import { createSessionRunner } from "@/server/sidecar/session/session-runner";
import type { PermissionQuestion } from "@/server/sidecar/session/session-runner-contract";
import { setWorkspaceDoor } from "@/server/workspace-agent";
import { startCliEnv, type CliEnv } from "@/test/cli-env";
import { createSessionFixtures, type SessionFixtures, type TestUser } from "@/test/session-fixtures";
import { startTestSidecar, type TestSidecar } from "@/test/sidecar-fixture";
const log = pino({ level: "silent" });

let counter = 0;
const commandId = () => `cmd-${++counter}-${Math.random().toString(36).slice(2, 10)}`;

async function until<T>(
  check: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 30_000,
  what = "condition",
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** One browser tab: a socket that collects approval facts. */
class Client {
  readonly requested: ApprovalView[] = [];
  readonly resolved: ApprovalResolved[] = [];
  constructor(readonly socket: Socket) {
    socket.on("approval:requested", (v: ApprovalView) => this.requested.push(v));
    socket.on("approval:resolved", (r: ApprovalResolved) => this.resolved.push(r));
  }
  command<T>(name: string, payload: unknown): Promise<Ack<T>> {
    return this.socket.timeout(30_000).emitWithAck(name, payload) as Promise<Ack<T>>;
  }
  approvalFor(sessionId: string, tool: string): Promise<ApprovalView> {
    return until(
      () => this.requested.find((a) => a.sessionId === sessionId && a.toolName === tool && !this.used.has(a.id)),
      30_000,
      `${tool} approval`,
    ).then((a) => {
      this.used.add(a.id);
      return a;
    });
  }
  decide(approvalId: string, decision: Decision, id = commandId()): Promise<Ack<ApprovalView>> {
    return this.command("approval:decide", { approvalId, decision, commandId: id });
  }
  private readonly used = new Set<string>();
}

/** Runs before the approval service sees a question (a test prepares the disk there). */
let beforeDecide: ((question: PermissionQuestion) => void) | undefined;

describe("approvals with the real CLI", () => {
  let cli: CliEnv;
  let fx: SessionFixtures;
  let sidecar: TestSidecar;
  let owner: Client;
  let editor: Client;
  let viewer: Client;
  const sessions: string[] = [];

  async function open(user: TestUser): Promise<Client> {
    return new Client(await sidecar.connect(user));
  }

  /** Starts a session running `steps` and returns its id. */
  async function run(name: string, steps: Step[]): Promise<string> {
    cli.server.addScenario(name, steps);
    const created = await owner.command<SessionView>("session:create", {
      workspace: fx.workspace.slug,
      mode: "default",
      commandId: commandId(),
    });
    if (!created.ok) throw new Error(created.error.message);
    const sessionId = created.data.id;
    sessions.push(sessionId);
    const sent = await owner.command("session:prompt", {
      sessionId,
      text: `[scenario:${name}] go`,
      commandId: commandId(),
    });
    if (!sent.ok) throw new Error(sent.error.message);
    return sessionId;
  }

  /** The turn's result line, once it is in the log. */
  async function resultOf(sessionId: string): Promise<{ result?: string; is_error?: boolean }> {
    return until(
      async () => {
        const rows = await listSessionEvents(fx.db, sessionId, 0);
        for (const row of rows) {
          if (row.kind !== "cli") continue;
          const value = JSON.parse(row.payload) as { type?: string };
          if (value.type === "result") return value as { result?: string; is_error?: boolean };
        }
        return undefined;
      },
      40_000,
      "result",
    );
  }

  const toolResults = (scenario: string) =>
    cli.server.requests.filter((r) => r.scenario === scenario).flatMap((r) => r.toolResults);

  let savedDataDir: string | undefined;

  beforeAll(async () => {
    cli = await startCliEnv();
    fx = await createSessionFixtures({ rootPath: cli.cwd });
    // the approval card reads through the workspace's files door, whose shadow folder is under the data dir
    savedDataDir = process.env.CONDUIT_DATA_DIR;
    process.env.CONDUIT_DATA_DIR = fx.dataDir;
    sidecar = await startTestSidecar(fx, {
      approvals: true,
      log,
      wrapDecider: (decide) => async (session, question) => {
        beforeDecide?.(question);
        return decide(session, question);
      },
      createRunner: (options, decidePermission) =>
        createSessionRunner(options, { cliPath: cli.cliPath, decidePermission, baseEnv: cli.env }),
    });
    owner = await open(fx.owner);
    editor = await open(fx.editor);
    viewer = await open(fx.viewer);
  }, 60_000);

  afterEach(async () => {
    // One CLI child per test at most: stop the sessions a test started.
    for (const sessionId of sessions.splice(0)) {
      await owner.command("session:stop", { sessionId, commandId: commandId() });
    }
  });

  afterAll(async () => {
    await sidecar?.close();
    setWorkspaceDoor(undefined)?.close();
    if (savedDataDir === undefined) delete process.env.CONDUIT_DATA_DIR;
    else process.env.CONDUIT_DATA_DIR = savedDataDir;
    await cli?.close();
    await fx?.close();
  }, 60_000);

  it("an Edit approved with a modified right side leaves exactly the modified text on disk; the record keeps both", async () => {
    await writeFile(path.join(cli.cwd, "edit-a.txt"), "alpha\nbeta\ngamma\n");
    const sessionId = await run("edit-modified", [
      callTool("Edit", { file_path: "edit-a.txt", old_string: "beta", new_string: "BETA" }),
      say("Edited."),
    ]);
    const approval = await owner.approvalFor(sessionId, "Edit");
    expect(approval.review).toMatchObject({ original: "alpha\nbeta\ngamma\n", proposed: "alpha\nBETA\ngamma\n" });
    expect(approval.review!.hunks).toEqual([expect.objectContaining({ removed: ["beta"], added: ["BETA"] })]);
    const reviewed = "alpha\nBea's beta\ngamma\n";
    const ack = await owner.decide(approval.id, { behavior: "allow", reviewedText: reviewed });
    expect(ack).toMatchObject({ ok: true, data: { status: "allowed", approvedText: reviewed } });
    await resultOf(sessionId);
    expect(await readFile(path.join(cli.cwd, "edit-a.txt"), "utf8")).toBe(reviewed);
    const row = await fx.db.approval.findUniqueOrThrow({ where: { id: approval.id } });
    expect(row).toMatchObject({ status: "allowed", decidedById: fx.owner.id });
    expect(JSON.parse(row.finalInput!)).toMatchObject({ file_path: expect.stringContaining("edit-a.txt") });
    const audit = await fx.db.auditLog.findFirstOrThrow({ where: { objectId: approval.id } });
    expect(JSON.parse(audit.details!)).toMatchObject({
      review: { proposed: "alpha\nBETA\ngamma\n", approved: reviewed },
    });
    // The decision is in the session log too.
    const rows = await listSessionEvents(fx.db, sessionId, 0);
    expect(rows.some((r) => r.kind === "decision" && r.payload.includes('"allow"'))).toBe(true);
  }, 60_000);

  it("an Edit with two hunks, one rejected, writes only the accepted hunk", async () => {
    const lines = Array.from({ length: 12 }, (_, i) => `line ${i + 1}`);
    await writeFile(path.join(cli.cwd, "edit-b.txt"), `${lines.join("\n")}\n`);
    const oldString = lines.join("\n");
    const newString = lines.map((l, i) => (i === 1 ? "LINE 2" : i === 10 ? "LINE 11" : l)).join("\n");
    const sessionId = await run("edit-two-hunks", [
      callTool("Edit", { file_path: "edit-b.txt", old_string: oldString, new_string: newString }),
      say("Edited."),
    ]);
    const approval = await owner.approvalFor(sessionId, "Edit");
    expect(approval.review!.hunks).toHaveLength(2);
    // The browser rejects the second hunk: the first change only.
    const reviewed = `${lines.map((l, i) => (i === 1 ? "LINE 2" : l)).join("\n")}\n`;
    expect((await owner.decide(approval.id, { behavior: "allow", reviewedText: reviewed })).ok).toBe(true);
    await resultOf(sessionId);
    expect(await readFile(path.join(cli.cwd, "edit-b.txt"), "utf8")).toBe(reviewed);
  }, 60_000);

  it("a Write approved unchanged creates the file", async () => {
    await rm(path.join(cli.cwd, "created.txt"), { force: true });
    const sessionId = await run("write-new", [
      callTool("Write", { file_path: "created.txt", content: "fresh\n" }),
      say("Written."),
    ]);
    const approval = await owner.approvalFor(sessionId, "Write");
    expect(approval.review).toMatchObject({ original: null, proposed: "fresh\n" });
    expect((await owner.decide(approval.id, { behavior: "allow", reviewedText: "fresh\n" })).ok).toBe(true);
    await resultOf(sessionId);
    expect(await readFile(path.join(cli.cwd, "created.txt"), "utf8")).toBe("fresh\n");
  }, 60_000);

  /** The cells of a notebook in the workspace, as stored. */
  async function cellsOf(file: string): Promise<{ id?: string; cell_type: string; source: string | string[] }[]> {
    return (JSON.parse(await readFile(path.join(cli.cwd, file), "utf8")) as { cells: [] }).cells;
  }
  const joined = (source: string | string[]) => (Array.isArray(source) ? source.join("") : source);

  it("a NotebookEdit replace approved with a modified cell writes exactly the reviewed source into that cell; the other cell is untouched", async () => {
    const markdown = { cell_type: "markdown", id: "cell-b", metadata: {}, source: ["# Title\n", "Some text"] };
    const notebook = {
      cells: [
        {
          cell_type: "code",
          execution_count: null,
          id: "cell-a",
          metadata: {},
          outputs: [],
          source: ["x = 1\n", "print(x)"],
        },
        markdown,
      ],
      metadata: { language_info: { name: "python" } },
      nbformat: 4,
      nbformat_minor: 5,
    };
    await writeFile(path.join(cli.cwd, "nb-replace.ipynb"), `${JSON.stringify(notebook, null, 1)}\n`);
    const sessionId = await run("notebook-modified", [
      // The CLI refuses a NotebookEdit on a notebook the conversation has not read.
      callTool("Read", { file_path: "nb-replace.ipynb" }),
      callTool("NotebookEdit", {
        notebook_path: "nb-replace.ipynb",
        cell_id: "cell-a",
        new_source: "x = 2\nprint(x)",
        cell_type: "code",
        edit_mode: "replace",
      }),
      say("Edited."),
    ]);
    const approval = await owner.approvalFor(sessionId, "NotebookEdit");
    expect(approval.review).toMatchObject({
      filePath: expect.stringContaining("nb-replace.ipynb"),
      original: "x = 1\nprint(x)",
      proposed: "x = 2\nprint(x)",
      hunks: [expect.objectContaining({ removed: ["x = 1"], added: ["x = 2"] })],
      cell: { editMode: "replace", index: 0, label: 'cell "cell-a" · code', language: "python" },
    });
    expect(approval.review!.problem).toBeUndefined();
    const reviewed = "x = 3  # reviewed\nprint(x)\n";
    const ack = await owner.decide(approval.id, { behavior: "allow", reviewedText: reviewed });
    expect(ack).toMatchObject({ ok: true, data: { status: "allowed", approvedText: reviewed } });
    await resultOf(sessionId);
    expect(toolResults("notebook-modified").filter((r) => r.isError)).toEqual([]);
    const cells = await cellsOf("nb-replace.ipynb");
    expect(cells).toHaveLength(2);
    expect(cells[0]).toMatchObject({ id: "cell-a", cell_type: "code" });
    expect(joined(cells[0]!.source)).toBe(reviewed);
    expect(cells[1]).toEqual(markdown);
    const row = await fx.db.approval.findUniqueOrThrow({ where: { id: approval.id } });
    expect(JSON.parse(row.finalInput!)).toMatchObject({ cell_id: "cell-a", new_source: reviewed });
    const audit = await fx.db.auditLog.findFirstOrThrow({ where: { objectId: approval.id } });
    expect(JSON.parse(audit.details!)).toMatchObject({
      review: {
        filePath: expect.stringContaining("nb-replace.ipynb"),
        proposed: "x = 2\nprint(x)",
        approved: reviewed,
      },
    });
  }, 60_000);

  it("a NotebookEdit by cell-N on a notebook without ids reviews and writes the N-th cell (0-based)", async () => {
    const notebook = {
      cells: ["a = 1\n", "b = 2\n", "c = 3\n"].map((line) => ({
        cell_type: "code",
        execution_count: null,
        metadata: {},
        outputs: [],
        source: [line],
      })),
      metadata: {},
      nbformat: 4,
      nbformat_minor: 4,
    };
    await writeFile(path.join(cli.cwd, "nb-index.ipynb"), JSON.stringify(notebook, null, 1));
    const sessionId = await run("notebook-index", [
      callTool("Read", { file_path: "nb-index.ipynb" }),
      callTool("NotebookEdit", { notebook_path: "nb-index.ipynb", cell_id: "cell-1", new_source: "b = 20\n" }),
      say("Edited."),
    ]);
    const approval = await owner.approvalFor(sessionId, "NotebookEdit");
    expect(approval.review).toMatchObject({ original: "b = 2\n", proposed: "b = 20\n", cell: { index: 1 } });
    const reviewed = "b = 21\n";
    expect((await owner.decide(approval.id, { behavior: "allow", reviewedText: reviewed })).ok).toBe(true);
    await resultOf(sessionId);
    expect((await cellsOf("nb-index.ipynb")).map((c) => joined(c.source))).toEqual(["a = 1\n", reviewed, "c = 3\n"]);
  }, 60_000);

  it("a NotebookEdit delete is reviewed as the cell against nothing; allowed, the cell is gone", async () => {
    const notebook = {
      cells: [
        { cell_type: "markdown", id: "keep", metadata: {}, source: "# Keep\n" },
        { cell_type: "markdown", id: "drop", metadata: {}, source: "# Drop\n" },
      ],
      metadata: {},
      nbformat: 4,
      nbformat_minor: 5,
    };
    await writeFile(path.join(cli.cwd, "nb-delete.ipynb"), JSON.stringify(notebook, null, 1));
    const sessionId = await run("notebook-delete", [
      callTool("Read", { file_path: "nb-delete.ipynb" }),
      callTool("NotebookEdit", {
        notebook_path: "nb-delete.ipynb",
        cell_id: "drop",
        new_source: "",
        edit_mode: "delete",
      }),
      say("Deleted."),
    ]);
    const approval = await owner.approvalFor(sessionId, "NotebookEdit");
    expect(approval.review).toMatchObject({
      original: "# Drop\n",
      proposed: "",
      cell: { editMode: "delete", index: 1 },
    });
    // A delete cannot be reshaped: any text is refused, and the request stays pending.
    expect(await owner.decide(approval.id, { behavior: "allow", reviewedText: "# Dr" })).toMatchObject({
      ok: false,
      error: { code: "invalid_payload" },
    });
    expect((await owner.decide(approval.id, { behavior: "allow", reviewedText: "" })).ok).toBe(true);
    await resultOf(sessionId);
    expect((await cellsOf("nb-delete.ipynb")).map((c) => c.id)).toEqual(["keep"]);
  }, 60_000);

  it("ExitPlanMode: the plan the model put in its call is shown (the CLI asks with input {}), never the text before it", async () => {
    const plan = "# Plan: tidy\n\n1. Create a file.\n2. List the workspace.";
    const sessionId = await run("plan-in-call", [
      callTool("EnterPlanMode", {}, { text: "Switching to plan mode." }),
      callTool("ExitPlanMode", { plan }, { text: "Here is my plan. Approve it." }),
      say("Planned."),
    ]);
    const approval = await owner.approvalFor(sessionId, "ExitPlanMode");
    expect(approval.input).toEqual({});
    expect(approval.plan).toBe(plan);
    expect(approval.planNote).toMatch(/kept no plan file/);
    expect((await owner.decide(approval.id, { behavior: "allow" })).ok).toBe(true);
    await resultOf(sessionId);
    // A stored row (another sidecar, a restart) finds the same plan in the session's log by its call's id.
    const row = await fx.db.approval.findUniqueOrThrow({ where: { id: approval.id } });
    expect(await findStreamedPlan(fx.db, sessionId, row.toolUseId!)).toBe(plan);
    expect(await findStreamedPlan(fx.db, sessionId, "toolu_unknown")).toBeNull();
  }, 60_000);

  it("ExitPlanMode after the model wrote its plan file: the CLI's plan, and the file named", async () => {
    const planFileOf = (request: unknown) => /create your plan at (\S+?\.md)/.exec(JSON.stringify(request))?.[1] ?? "missing.md";
    const sessionId = await run("plan-file", [
      callTool("EnterPlanMode", {}, { text: "Switching." }),
      (ctx) => callTool("Write", { file_path: planFileOf(ctx.request), content: "# The real plan\n\n1. step one\n" }, { text: "Writing the plan." }),
      callTool("ExitPlanMode", {}, { text: "Done planning." }),
      say("Planned."),
    ]);
    const approval = await owner.approvalFor(sessionId, "ExitPlanMode");
    expect(approval.plan).toBe("# The real plan\n\n1. step one\n");
    expect(approval.planNote).toMatch(/^From Claude Code's plan file [a-z-]+\.md\.$/);
    expect((await owner.decide(approval.id, { behavior: "deny", message: "Keep going" })).ok).toBe(true);
    await resultOf(sessionId);
  }, 60_000);

  it("ExitPlanMode with no plan anywhere says so plainly", async () => {
    const sessionId = await run("plan-none", [
      callTool("EnterPlanMode", {}, { text: "Switching." }),
      callTool("ExitPlanMode", {}, { text: "Here is my plan, trust me." }),
      say("Planned."),
    ]);
    const approval = await owner.approvalFor(sessionId, "ExitPlanMode");
    expect(approval.plan).toBeNull();
    expect(approval.planNote).toMatch(/^Claude Code sent no plan with this request/);
    expect((await owner.decide(approval.id, { behavior: "deny" })).ok).toBe(true);
    await resultOf(sessionId);
  }, 60_000);

  it("a Bash call with an edited command runs the edited command", async () => {
    const sessionId = await run("bash-edited", [
      callTool("Bash", { command: "echo model > bash-out.txt", description: "write" }),
      say("Ran."),
    ]);
    const approval = await owner.approvalFor(sessionId, "Bash");
    const ack = await owner.decide(approval.id, {
      behavior: "allow",
      updatedInput: { ...approval.input, command: "echo approver > bash-out.txt" },
    });
    expect(ack).toMatchObject({ ok: true, data: { finalInput: { command: "echo approver > bash-out.txt" } } });
    await resultOf(sessionId);
    expect(await readFile(path.join(cli.cwd, "bash-out.txt"), "utf8")).toBe("approver\n");
    // the session's log says who decided (the conversation reads "<name> allowed Bash.")
    const decisions = (await listSessionEvents(fx.db, sessionId, 0)).filter((e) => e.kind === "decision");
    expect(decisions.map((e) => [JSON.parse(e.payload).behavior, e.userId])).toEqual([["allow", fx.owner.id]]);
  }, 60_000);

  it("a deny with a message reaches the model as the tool result", async () => {
    const sessionId = await run("deny-message", [
      callTool("Bash", { command: "rm -rf build", description: "clean" }),
      say("Understood."),
    ]);
    const approval = await owner.approvalFor(sessionId, "Bash");
    expect((await owner.decide(approval.id, { behavior: "deny", message: "Keep the build folder." })).ok).toBe(true);
    await resultOf(sessionId);
    expect(toolResults("deny-message")).toEqual([
      expect.objectContaining({ isError: true, text: expect.stringContaining("Keep the build folder.") }),
    ]);
  }, 60_000);

  it("AskUserQuestion answers reach the model", async () => {
    const question = "Which colour?";
    const sessionId = await run("ask", [
      callTool("AskUserQuestion", {
        questions: [
          {
            question,
            header: "Colour",
            multiSelect: false,
            options: [
              { label: "Red", description: "warm" },
              { label: "Blue", description: "cool" },
            ],
          },
        ],
      }),
      say("Thanks."),
    ]);
    const approval = await owner.approvalFor(sessionId, "AskUserQuestion");
    const ack = await owner.decide(approval.id, {
      behavior: "allow",
      updatedInput: { ...approval.input, answers: { [question]: "Blue" } },
    });
    expect(ack.ok).toBe(true);
    await resultOf(sessionId);
    const text = toolResults("ask")
      .map((r) => r.text)
      .join("\n");
    expect(text).toContain("Blue");
  }, 60_000);

  it("at a 2 s deadline the request expires: the CLI gets a deny with a message and the turn goes on; a late decision is refused", async () => {
    await fx.db.workspace.update({ where: { id: fx.workspace.id }, data: { approvalDeadlineSec: 2 } });
    try {
      const sessionId = await run("expire", [
        callTool("Bash", { command: "echo late > late.txt", description: "late" }),
        say("Carried on."),
      ]);
      const approval = await owner.approvalFor(sessionId, "Bash");
      expect(Date.parse(approval.expiresAt!) - Date.parse(approval.createdAt)).toBe(2000);
      const result = await resultOf(sessionId);
      expect(result).toMatchObject({ is_error: false, result: "Carried on." });
      expect(toolResults("expire")).toEqual([
        expect.objectContaining({ isError: true, text: expect.stringContaining("expired unanswered") }),
      ]);
      const row = await fx.db.approval.findUniqueOrThrow({ where: { id: approval.id } });
      expect(row.status).toBe("expired");
      expect(owner.resolved.find((r) => r.approvalId === approval.id)).toMatchObject({ status: "expired" });
      const late = await owner.decide(approval.id, { behavior: "allow" });
      expect(late).toMatchObject({ ok: false, error: { code: "expired" } });
    } finally {
      await fx.db.workspace.update({ where: { id: fx.workspace.id }, data: { approvalDeadlineSec: 600 } });
    }
  }, 60_000);

  // The CLI itself reads an existing Edit target before it asks (a FIFO there hangs the CLI,
  // not Conduit), so the pipe appears where a Write will create a file, after the CLI checked
  // the path and before Conduit reads it for the review: what a session racing its own tool
  // call (a Bash job running `mkfifo`) can do.
  const withFifoBeforeReview = (name: string) => {
    const fifo = path.join(cli.cwd, name);
    beforeDecide = (question) => {
      if (question.request.tool_name === "Write" && String(question.request.input.file_path).endsWith(name)) {
        execFileSync("mkfifo", [fifo]);
      }
    };
    return fifo;
  };

  it("a Write onto a named pipe (FIFO) still asks, says why there is no review, and expires at its deadline", async () => {
    const fifo = withFifoBeforeReview("pipe-1.txt");
    await fx.db.workspace.update({ where: { id: fx.workspace.id }, data: { approvalDeadlineSec: 2 } });
    try {
      const sessionId = await run("write-fifo-expire", [
        callTool("Write", { file_path: fifo, content: "never written\n" }),
        say("Carried on."),
      ]);
      const approval = await owner.approvalFor(sessionId, "Write");
      expect(approval.review).toMatchObject({ problem: expect.stringContaining("named pipe (FIFO)") });
      expect(await resultOf(sessionId)).toMatchObject({ result: "Carried on." });
      const row = await fx.db.approval.findUniqueOrThrow({ where: { id: approval.id } });
      expect(row.status).toBe("expired");
      expect(owner.resolved.find((r) => r.approvalId === approval.id)).toMatchObject({ status: "expired" });
    } finally {
      beforeDecide = undefined;
      await fx.db.workspace.update({ where: { id: fx.workspace.id }, data: { approvalDeadlineSec: 600 } });
      await rm(fifo, { force: true });
    }
  }, 60_000);

  it("a Write onto a named pipe can be denied like any other request", async () => {
    const fifo = withFifoBeforeReview("pipe-2.txt");
    try {
      const sessionId = await run("write-fifo-deny", [
        callTool("Write", { file_path: fifo, content: "never written\n" }),
        say("Understood."),
      ]);
      const approval = await owner.approvalFor(sessionId, "Write");
      expect(approval.review?.problem).toContain("named pipe");
      const ack = await owner.decide(approval.id, { behavior: "deny", message: "Not a pipe, please." });
      expect(ack).toMatchObject({ ok: true, data: { status: "denied" } });
      expect(await resultOf(sessionId)).toMatchObject({ result: "Understood." });
    } finally {
      beforeDecide = undefined;
      await rm(fifo, { force: true });
    }
  }, 60_000);

  it("routes to owners and editors only; a viewer's decision is forbidden; a second decision is already_decided; a retry returns the first outcome", async () => {
    const sessionId = await run("routing", [
      callTool("Bash", { command: "echo routed > routed.txt", description: "route" }),
      say("Routed."),
    ]);
    const approval = await owner.approvalFor(sessionId, "Bash");
    await editor.approvalFor(sessionId, "Bash");
    expect(viewer.requested.some((a) => a.id === approval.id)).toBe(false);
    const listed = await owner.command<ApprovalList>("approval:list", {});
    expect(listed.ok && listed.data.approvals.some((a) => a.id === approval.id && a.status === "pending")).toBe(true);

    expect(await viewer.decide(approval.id, { behavior: "allow" })).toMatchObject({
      ok: false,
      error: { code: "forbidden" },
    });
    const id = commandId();
    const first = await editor.decide(approval.id, { behavior: "allow" }, id);
    expect(first).toMatchObject({ ok: true, data: { status: "allowed", decidedBy: { id: fx.editor.id } } });
    expect(await editor.decide(approval.id, { behavior: "allow" }, id)).toEqual(first);
    expect(await owner.decide(approval.id, { behavior: "deny" })).toMatchObject({
      ok: false,
      error: { code: "already_decided" },
    });
    await resultOf(sessionId);
    expect(await readFile(path.join(cli.cwd, "routed.txt"), "utf8")).toBe("routed\n");
  }, 60_000);

  it("allow and remember for the workspace: a new session runs the same command without asking", async () => {
    await rm(path.join(cli.cwd, "marker.txt"), { force: true });
    const first = await run("remember-1", [
      callTool("Bash", { command: "touch marker.txt", description: "mark" }),
      say("Marked."),
    ]);
    const approval = await owner.approvalFor(first, "Bash");
    const option = approval.rememberOptions.find((o) => o.workspaceScope);
    expect(option).toBeDefined();
    const ack = await owner.decide(approval.id, {
      behavior: "allow",
      remember: { index: option!.index, scope: "workspace" },
    });
    expect(ack.ok).toBe(true);
    await resultOf(first);
    expect(await fx.db.permissionRule.count({ where: { workspaceId: fx.workspace.id } })).toBeGreaterThan(0);

    await rm(path.join(cli.cwd, "marker.txt"));
    const second = await run("remember-2", [
      callTool("Bash", { command: "touch marker.txt", description: "mark" }),
      say("Marked again."),
    ]);
    expect(await resultOf(second)).toMatchObject({ result: "Marked again." });
    await readFile(path.join(cli.cwd, "marker.txt"), "utf8");
    expect(owner.requested.filter((a) => a.sessionId === second)).toEqual([]);
    const rows = await fx.db.approval.findMany({ where: { sessionId: second } });
    expect(rows).toEqual([
      expect.objectContaining({ status: "allowed", message: expect.stringContaining("workspace rule") }),
    ]);
  }, 60_000);

  it("cancels approvals left pending by an earlier run", async () => {
    const row = await fx.db.approval.create({
      data: {
        sessionId: (await fx.db.session.findFirstOrThrow()).id,
        requestId: "left-over",
        toolName: "Bash",
        input: "{}",
      },
    });
    expect(await sidecar.approvals!.cancelLeftovers()).toBeGreaterThanOrEqual(1);
    const after = await fx.db.approval.findUniqueOrThrow({ where: { id: row.id } });
    expect(after).toMatchObject({ status: "cancelled", message: expect.stringContaining("restarted") });
  });
});
