// ExitPlanMode's plan as the card shows it: the request's, the plan file's (through the doors), the
// model's streamed call, or a plain "none" — never another message's text.
import { beforeEach, describe, expect, it, vi } from "vitest";

const calls: { scope: unknown; op: string; input: unknown }[] = [];
let answer: (op: string, input: Record<string, unknown>) => unknown = () => ({ kind: "absent" });

vi.mock("@/server/workspace-agent", () => ({
  configScope: async (configDir: string) => ({ purpose: "files", configDir }),
  workspaceDoor: () => ({
    call: async (scope: unknown, op: string, input: Record<string, unknown>) => {
      calls.push({ scope, op, input });
      return answer(op, input);
    },
  }),
}));

const { configPlanName, readPlan } = await import("./approval-review");

const configDir = "/data/claude-config/ws1";
const workspace = { purpose: "files" as const, workspace: { root: "/ws", excluded: [] } };

beforeEach(() => {
  calls.length = 0;
  answer = () => ({ kind: "absent" });
});

describe("configPlanName", () => {
  it("names a plan file in the config directory's plans folder", () => {
    expect(configPlanName(`${configDir}/plans/dreamy-wiggling-marble.md`, configDir)).toBe("dreamy-wiggling-marble.md");
  });

  it("refuses anything else", () => {
    expect(configPlanName(`${configDir}/plans/../.claude.json`, configDir)).toBeNull();
    expect(configPlanName(`${configDir}/plans/sub/x.md`, configDir)).toBeNull();
    expect(configPlanName(`${configDir}/plans/.hidden.md`, configDir)).toBeNull();
    expect(configPlanName(`${configDir}/plans/x.txt`, configDir)).toBeNull();
    expect(configPlanName("plans/x.md", configDir)).toBeNull();
    expect(configPlanName(`${configDir}/plans/x.md`, null)).toBeNull();
  });
});

describe("readPlan", () => {
  it("shows the request's plan and names its file", async () => {
    const shown = await readPlan(
      { plan: "# The plan", planFilePath: `${configDir}/plans/spicy-painting-eagle.md` },
      { workspace, configDir, streamedPlan: "other" },
    );
    expect(shown).toEqual({ text: "# The plan", note: "From Claude Code's plan file spicy-painting-eagle.md." });
    expect(calls).toEqual([]);
  });

  it("reads the named plan file through the config directory's door", async () => {
    answer = () => ({ kind: "file", text: "1. step" });
    const shown = await readPlan({ planFilePath: `${configDir}/plans/a-b-c.md` }, { workspace, configDir });
    expect(shown.text).toBe("1. step");
    expect(calls).toEqual([{ scope: { purpose: "files", configDir }, op: "config.readPlan", input: { name: "a-b-c.md" } }]);
  });

  it("says why a named plan file could not be shown, then shows the streamed plan", async () => {
    answer = () => ({ kind: "other", type: "symlink" });
    const shown = await readPlan({ planFilePath: `${configDir}/plans/a-b-c.md` }, { workspace, configDir, streamedPlan: "streamed" });
    expect(shown).toEqual({ text: "streamed", note: "Claude Code named the plan file a-b-c.md, but it is a link." });
  });

  it("shows the plan the model streamed when the request carries none (CLI 2.1.332: input {})", async () => {
    const shown = await readPlan({}, { workspace, configDir, streamedPlan: "# Plan: tidy" });
    expect(shown.text).toBe("# Plan: tidy");
    expect(shown.note).toMatch(/kept no plan file/);
    expect(calls).toEqual([]);
  });

  it("says plainly that there is no plan, never falling back to other text", async () => {
    const shown = await readPlan({}, { workspace, configDir });
    expect(shown.text).toBeNull();
    expect(shown.note).toMatch(/^Claude Code sent no plan with this request/);
  });

  it("reads a plan file inside the workspace through its files door", async () => {
    answer = () => ({ located: true, read: { ok: true, text: "in the workspace" } });
    const shown = await readPlan({ planFilePath: "/ws/PLAN.md" }, { workspace, configDir });
    expect(shown.text).toBe("in the workspace");
    expect(calls[0]).toMatchObject({ op: "files.readForReview", input: { filePath: "/ws/PLAN.md" } });
  });
});
