import { describe, expect, it } from "vitest";
import {
  defaultDemoScenario,
  demoScenarioList,
  demoScenarios,
  demoBackgroundCommand,
  demoTourCommand,
  demoTourFile,
  planTourEdit,
} from "./demo-scenarios";
import type { ReplyStep, ResolvedStep, StepContext, ToolResultSeen, ToolUseSeen } from "./scenario";
import { selectScenario } from "./select-step";

const byName = new Map(demoScenarios.map((scenario) => [scenario.name, scenario]));

function pick(prompt: string): string | undefined {
  const choice = selectScenario(prompt, byName, defaultDemoScenario);
  return choice.kind === "scenario" ? choice.scenario.name : undefined;
}

/** Runs the tour against a scripted history of (tool use, result) pairs. */
function tourAfter(
  history: { use: Omit<ToolUseSeen, "id">; result?: Omit<ToolResultSeen, "toolUseId"> }[],
): ResolvedStep | undefined {
  const tour = byName.get("demo-tour")!;
  if (typeof tour.steps !== "function") throw new Error("the tour decides step by step");
  const uses = history.map((entry, i) => ({ ...entry.use, id: `toolu_${i}` }));
  const results = history.flatMap((entry, i) => (entry.result ? [{ ...entry.result, toolUseId: `toolu_${i}` }] : []));
  const ctx: StepContext = {
    scenario: "demo-tour",
    stepIndex: history.length,
    prompt: "show me",
    cwd: "/ws",
    lastToolResults: results.slice(-1),
    toolUsesSincePrompt: uses,
    toolResultsSincePrompt: results,
    model: "m",
    request: { model: "m", max_tokens: 1, messages: [] },
  };
  return tour.steps(ctx);
}

function toolOf(step: ResolvedStep | undefined): { name: string; input: Record<string, unknown> } | undefined {
  return (step as ReplyStep | undefined)?.tools?.[0];
}

const ok = (text = "done") => ({ isError: false, text });
const read = { name: "Read", input: { file_path: `/ws/${demoTourFile}` } };

describe("demo scenario list", () => {
  it("exports name, triggers and description of every scenario", () => {
    expect(demoScenarioList.map((info) => info.name)).toEqual([
      "demo-error",
      "demo-slow",
      "demo-question",
      "demo-plan",
      "demo-write",
      "demo-markdown",
      "demo-todo",
      "demo-background",
      "demo-agent",
      "demo-chat",
      "demo-tour",
    ]);
    for (const info of demoScenarioList) expect(info.description.length).toBeGreaterThan(10);
  });

  it.each([
    ["please WRITE a file", "demo-write"],
    ["ask me a question", "demo-question"],
    ["let's plan this", "demo-plan"],
    ["go slow", "demo-slow"],
    ["simulate an error", "demo-error"],
    ["hello!", "demo-chat"],
    ["show me some markdown", "demo-markdown"],
    ["hello, write something", "demo-write"],
    ["delegate this to an agent", "demo-agent"],
    ["run something in the background", "demo-background"],
    ["refactor everything", "demo-tour"],
    ["rewrite", "demo-tour"],
  ])("%s → %s", (prompt, name) => {
    expect(pick(prompt)).toBe(name);
  });
});

describe("the default tour", () => {
  it("reads the demo file first", () => {
    expect(toolOf(tourAfter([]))).toEqual({ name: "Read", input: { file_path: demoTourFile } });
  });

  it("writes the file when the read found nothing, then edits the written status line", () => {
    const missing = { isError: true, text: "File does not exist." };
    const write = toolOf(tourAfter([{ use: read, result: missing }]));
    expect(write?.name).toBe("Write");
    expect(write?.input.content).toContain("Status: draft");
    const edit = toolOf(
      tourAfter([
        { use: read, result: missing },
        { use: { name: "Write", input: {} }, result: ok() },
      ]),
    );
    expect(edit).toEqual({
      name: "Edit",
      input: { file_path: demoTourFile, old_string: "Status: draft", new_string: "Status: reviewed" },
    });
  });

  it("edits an existing file from what the Read showed (line-number prefixes removed)", () => {
    const edit = toolOf(tourAfter([{ use: read, result: ok("1\t# Title\n2\t\n3\tStatus: reviewed\n4\t") }]));
    expect(edit?.input).toMatchObject({ old_string: "Status: reviewed", new_string: "Status: approved" });
  });

  it("skips the edit after a refused Write, runs the command, then summarises and stops", () => {
    const history = [
      { use: read, result: { isError: true, text: "File does not exist." } },
      { use: { name: "Write", input: {} }, result: { isError: true, text: "denied" } },
    ];
    const bash = toolOf(tourAfter(history));
    expect(bash).toMatchObject({ name: "Bash", input: { command: demoTourCommand } });
    const withBash = [...history, { use: { name: "Bash", input: {} }, result: ok("total 0") }];
    const summary = tourAfter(withBash) as ReplyStep;
    expect(summary.text).toContain("was not allowed");
    expect(summary.tools).toBeUndefined();
    const tour = byName.get("demo-tour")!;
    if (typeof tour.steps !== "function") throw new Error("unreachable");
    expect(
      tour.steps({
        scenario: "demo-tour",
        stepIndex: 4,
        prompt: "x",
        cwd: "/ws",
        lastToolResults: [],
        toolUsesSincePrompt: withBash.map((entry, i) => ({ ...entry.use, id: `toolu_${i}` })),
        toolResultsSincePrompt: [],
        model: "m",
        request: { model: "m", max_tokens: 1, messages: [] },
      }),
    ).toBeUndefined();
  });
});

describe("planTourEdit", () => {
  it("cycles the status line", () => {
    expect(planTourEdit("x\nStatus: approved\n")).toEqual({
      old_string: "Status: approved",
      new_string: "Status: draft",
    });
  });

  it("appends after a unique last line of a foreign file, and gives up when nothing is unique", () => {
    expect(planTourEdit("hello\nworld\n")).toEqual({ old_string: "world", new_string: "world\n\nStatus: reviewed" });
    expect(planTourEdit("same\nsame\n")).toBeUndefined();
    expect(planTourEdit("")).toBeUndefined();
  });
});

/** Step `stepIndex` of a scenario that decides step by step; `lastUserText`: the request's last message. */
function callStep(name: string, stepIndex: number, lastUserText?: string): ReplyStep | undefined {
  const scenario = byName.get(name)!;
  if (typeof scenario.steps !== "function") throw new Error(`${name} decides step by step`);
  // as the CLI sends it: text blocks
  const messages =
    lastUserText === undefined
      ? []
      : [{ role: "user" as const, content: [{ type: "text" as const, text: lastUserText }] }];
  return scenario.steps({
    scenario: name,
    stepIndex,
    prompt: "a prompt",
    cwd: "/ws",
    lastToolResults: [],
    toolUsesSincePrompt: [],
    toolResultsSincePrompt: [],
    model: "m",
    request: { model: "m", max_tokens: 1, messages },
  }) as ReplyStep | undefined;
}

describe("the agent scenario", () => {
  const stepOf = (stepIndex: number, lastUserText?: string) => callStep("demo-agent", stepIndex, lastUserText);

  it("calls Agent with a prompt whose tag picks the subagent's scenario, then says it works in the background", () => {
    const call = toolOf(stepOf(0));
    expect(call?.name).toBe("Agent");
    expect(pick(String(call?.input.prompt))).toBe("demo-subagent");
    expect(stepOf(1)?.text).toContain("in the background");
    expect(stepOf(2)).toBeUndefined();
  });

  it("answers the CLI's task notification with the subagent's result", () => {
    const notification =
      "<system-reminder>\n[SYSTEM NOTIFICATION - NOT USER INPUT]\n<task-notification>\n<status>completed</status>\n" +
      "<result>`conduit-demo.md` has 5 lines.</result>\n</task-notification>\n</system-reminder>";
    expect(stepOf(2, notification)?.text).toBe("The subagent reported back: `conduit-demo.md` has 5 lines.");
  });

  it("has its subagent read the file, ask to note what it found (a shell write the CLI asks about), and report", () => {
    const subagent = byName.get("demo-subagent")!;
    const steps = subagent.steps as readonly ((ctx: StepContext) => ReplyStep)[];
    const read = { toolUseId: "t1", isError: false, text: "     1\t# Demo\n     2\tStatus: draft\n     3\t" };
    const ctx = (results: { toolUseId: string; isError: boolean; text: string }[]) =>
      ({
        scenario: "demo-subagent",
        stepIndex: results.length,
        prompt: "p",
        cwd: "/ws",
        lastToolResults: results.slice(-1),
        toolUsesSincePrompt: [],
        toolResultsSincePrompt: results,
        model: "m",
        request: { model: "m", max_tokens: 1, messages: [] },
      }) as StepContext;
    const note = steps[1]!(ctx([read]));
    expect(note.tools?.[0]).toMatchObject({
      name: "Bash",
      input: { command: "echo 'conduit-demo.md has 3 lines.' > demo-survey.txt" },
    });
    expect(steps[2]!(ctx([read, { toolUseId: "t2", isError: false, text: "" }])).text).toBe(
      "`conduit-demo.md` has 3 lines. Noted in `demo-survey.txt`.",
    );
    expect(steps[2]!(ctx([read, { toolUseId: "t2", isError: true, text: "denied" }])).text).toBe(
      "`conduit-demo.md` has 3 lines. The note was not allowed.",
    );
    const missing = { toolUseId: "t1", isError: true, text: "File does not exist." };
    expect(steps[1]!(ctx([missing])).tools?.[0]?.input.command).toBe(
      "echo 'conduit-demo.md does not exist yet (try tour to create it).' > demo-survey.txt",
    );
  });

  it("is not offered by a word: the subagent's scenario is picked by its tag only", () => {
    expect(demoScenarioList.map((info) => info.name)).not.toContain("demo-subagent");
    expect(pick("subagent")).toBe("demo-agent");
  });
});

describe("the background scenario", () => {
  const stepOf = (stepIndex: number, lastUserText?: string) => callStep("demo-background", stepIndex, lastUserText);

  it("runs its command in the background, says where it is listed, then reports how it ended", () => {
    expect(toolOf(stepOf(0))).toEqual({
      name: "Bash",
      input: expect.objectContaining({ command: demoBackgroundCommand, run_in_background: true }),
    });
    expect(stepOf(1)?.text).toContain("Stop");
    expect(stepOf(2)).toBeUndefined();
    expect(stepOf(2, "<task-notification>\n<status>killed</status>\n</task-notification>")?.text).toBe(
      "The background command ended (killed).",
    );
  });
});
