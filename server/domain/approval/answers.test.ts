import { describe, expect, it } from "vitest";
import type { CanUseToolRequest } from "@/server/shared/claude-protocol/messages";
import { encodePermissionDecision, ZPermissionDecision } from "@/server/shared/claude-protocol/encode";
import { AppError } from "@/server/shared/errors/app-error";
import {
  allowAndRemember,
  allowBashCommand,
  allowRequest,
  answerQuestions,
  approvePlan,
  DEFAULT_DENY_MESSAGE,
  DEFAULT_KEEP_PLANNING_MESSAGE,
  denyAndStop,
  denyRequest,
  describeDeadline,
  exactCommandRule,
  expiryDenial,
  expiryMessage,
  joinMultiSelect,
  keepPlanning,
  matchesWorkspaceRule,
  ruleLabel,
  workspaceRulesFromSuggestion,
  type WorkspaceRule,
} from "./answers";

// Captured in transcripts/ask-user-question.ndjson (CLI 2.1.332): the request and the answer
// the CLI accepted ("Your questions have been answered: …").
const askRequest: CanUseToolRequest = {
  subtype: "can_use_tool",
  tool_name: "AskUserQuestion",
  display_name: "AskUserQuestion",
  input: {
    questions: [
      {
        question: "Which colour should the button be?",
        header: "Colour",
        options: [
          { label: "Red", description: "A red button" },
          { label: "Blue", description: "A blue button" },
        ],
        multiSelect: false,
      },
    ],
  },
  tool_use_id: "toolu_0200_1mfnzf",
  requires_user_interaction: true,
};
const askAcceptedAnswer = {
  behavior: "allow",
  updatedInput: {
    questions: askRequest.input.questions,
    answers: { "Which colour should the button be?": "Blue" },
  },
};

// Captured in transcripts/perm-always-allow-session.ndjson.
const bashRequest: CanUseToolRequest = {
  subtype: "can_use_tool",
  tool_name: "Bash",
  display_name: "Bash",
  input: {
    command: "echo same-command >> /srv/capture/ws-5e3t54b6/out.txt",
    description: "Append a line to the target file",
  },
  description: "Append a line to the target file",
  permission_suggestions: [
    {
      type: "addRules",
      rules: [{ toolName: "Bash", ruleContent: "echo same-command *" }],
      behavior: "allow",
      destination: "localSettings",
    },
    { type: "addDirectories", directories: ["/srv/capture/ws-5e3t54b6"], destination: "session" },
  ],
  blocked_path: "/srv/capture/ws-5e3t54b6/out.txt",
  tool_use_id: "toolu_0030_g0967w",
};

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof AppError) return err.code;
    throw err;
  }
  throw new Error("expected an AppError");
}

function valid(decision: unknown) {
  expect(ZPermissionDecision.safeParse(decision).success).toBe(true);
  return decision;
}

describe("allow and deny", () => {
  it("allow echoes the input when unchanged", () => {
    expect(valid(allowRequest(bashRequest))).toEqual({ behavior: "allow", updatedInput: bashRequest.input });
  });

  it("Bash with an edited command keeps description and options", () => {
    expect(valid(allowBashCommand(bashRequest, "echo HOST-MODIFIED"))).toEqual({
      behavior: "allow",
      updatedInput: { command: "echo HOST-MODIFIED", description: "Append a line to the target file" },
    });
    expect(code(() => allowBashCommand(bashRequest, "  "))).toBe("invalid_payload");
    expect(code(() => allowBashCommand({ ...bashRequest, tool_name: "Edit" }, "x"))).toBe("invalid_payload");
  });

  it("deny carries the approver's message, or a default when blank", () => {
    expect(valid(denyRequest({ message: "Host says no to this command" }))).toEqual({
      behavior: "deny",
      message: "Host says no to this command",
    });
    expect(denyRequest({ message: "   " })).toEqual({ behavior: "deny", message: DEFAULT_DENY_MESSAGE });
    expect(denyRequest()).toEqual({ behavior: "deny", message: DEFAULT_DENY_MESSAGE });
  });

  it("deny and stop sets interrupt", () => {
    expect(valid(denyAndStop("Host denied and interrupts"))).toEqual({
      behavior: "deny",
      message: "Host denied and interrupts",
      interrupt: true,
    });
    expect(denyAndStop()).toMatchObject({ message: DEFAULT_DENY_MESSAGE, interrupt: true });
  });

  it("refuses an input that is not JSON before anything is encoded", () => {
    expect(code(() => allowRequest(bashRequest, { when: new Date() as unknown as string, n: NaN }))).toBe(
      "invalid_payload",
    );
  });
});

describe("ExitPlanMode", () => {
  const plan: CanUseToolRequest = {
    subtype: "can_use_tool",
    tool_name: "ExitPlanMode",
    input: {},
    requires_user_interaction: true,
  };

  it("approve = allow with the (empty) input, as in transcripts/exit-plan-mode", () => {
    expect(valid(approvePlan(plan))).toEqual({ behavior: "allow", updatedInput: {} });
  });

  it("keep planning = deny with the approver's message", () => {
    expect(valid(keepPlanning("Keep planning: the plan needs tests first"))).toEqual({
      behavior: "deny",
      message: "Keep planning: the plan needs tests first",
    });
    expect(keepPlanning("")).toEqual({ behavior: "deny", message: DEFAULT_KEEP_PLANNING_MESSAGE });
  });
});

describe("AskUserQuestion", () => {
  it("builds exactly the answer the CLI accepted in the capture", () => {
    const decision = answerQuestions(askRequest, { "Which colour should the button be?": "Blue" });
    expect(decision).toEqual(askAcceptedAnswer);
    expect(encodePermissionDecision("3a2d3757-990d-4376-997d-e9a987a6bdf7", decision)).toContain(
      '"answers":{"Which colour should the button be?":"Blue"}',
    );
  });

  const multi: CanUseToolRequest = {
    subtype: "can_use_tool",
    tool_name: "AskUserQuestion",
    input: {
      questions: [
        {
          question: "Which features?",
          header: "Features",
          options: [{ label: "Auth" }, { label: "Search, fast" }, { label: 'The "pro" plan' }],
          multiSelect: true,
        },
        {
          question: "Which colour?",
          header: "Colour",
          options: [{ label: "Red" }, { label: "Blue" }],
          multiSelect: false,
        },
      ],
    },
  };

  it("joins multi-select labels as the CLI does (', ', quoting labels that hold ', ' or \")", () => {
    expect(joinMultiSelect(["Auth", "Search, fast", 'The "pro" plan'])).toBe(
      'Auth, "Search, fast", "The \\"pro\\" plan"',
    );
    const decision = answerQuestions(multi, { "Which features?": ["Auth", "Search, fast"], "Which colour?": "Red" });
    expect(valid(decision)).toMatchObject({
      updatedInput: { answers: { "Which features?": 'Auth, "Search, fast"', "Which colour?": "Red" } },
    });
  });

  it("accepts free text (the CLI's Other)", () => {
    expect(answerQuestions(multi, { "Which features?": "none of these", "Which colour?": "Green" })).toMatchObject({
      updatedInput: { answers: { "Which colour?": "Green" } },
    });
  });

  it("refuses missing, blank, unknown and multiple answers to a single-select question", () => {
    expect(code(() => answerQuestions(multi, { "Which colour?": "Red" }))).toBe("invalid_payload");
    expect(code(() => answerQuestions(multi, { "Which features?": [], "Which colour?": "Red" }))).toBe(
      "invalid_payload",
    );
    expect(code(() => answerQuestions(multi, { "Which features?": "Auth", "Which colour?": " " }))).toBe(
      "invalid_payload",
    );
    expect(
      code(() => answerQuestions(multi, { "Which features?": "Auth", "Which colour?": "Red", "Other?": "x" })),
    ).toBe("invalid_payload");
    expect(code(() => answerQuestions(multi, { "Which features?": "Auth", "Which colour?": ["Red", "Blue"] }))).toBe(
      "invalid_payload",
    );
  });

  it("refuses a request that is not a question, or already carries answers", () => {
    expect(code(() => answerQuestions(bashRequest, {}))).toBe("invalid_payload");
    const answered = { ...askRequest, input: { ...askRequest.input, answers: {} } };
    expect(code(() => answerQuestions(answered, { "Which colour should the button be?": "Blue" }))).toBe(
      "invalid_payload",
    );
  });
});

describe("expiry", () => {
  it("says how long nobody answered", () => {
    expect(expiryMessage(600)).toBe("This request expired unanswered after 10 minutes; nobody approved it in Conduit.");
    expect(describeDeadline(60)).toBe("1 minute");
    expect(describeDeadline(2)).toBe("2 seconds");
    expect(describeDeadline(1)).toBe("1 second");
    expect(describeDeadline(90)).toBe("90 seconds");
    expect(valid(expiryDenial(2))).toEqual({
      behavior: "deny",
      message: "This request expired unanswered after 2 seconds; nobody approved it in Conduit.",
    });
  });

  it("does not interrupt: the turn goes on", () => {
    expect(expiryDenial(600)).not.toHaveProperty("interrupt");
  });
});

describe("allow and remember", () => {
  it("session: the chosen suggestion goes back with destination session (as in the capture)", () => {
    const { decision, workspaceRules } = allowAndRemember(bashRequest, { suggestionIndex: 0, scope: "session" });
    expect(valid(decision)).toEqual({
      behavior: "allow",
      updatedInput: bashRequest.input,
      updatedPermissions: [
        {
          type: "addRules",
          rules: [{ toolName: "Bash", ruleContent: "echo same-command *" }],
          behavior: "allow",
          destination: "session",
        },
      ],
    });
    expect(workspaceRules).toEqual([]);
  });

  it("session: mode and directory suggestions are sent as they are, for the session", () => {
    const edit: CanUseToolRequest = {
      subtype: "can_use_tool",
      tool_name: "Edit",
      input: { file_path: "/ws/a", old_string: "a", new_string: "b", replace_all: false },
      permission_suggestions: [{ type: "setMode", mode: "acceptEdits", destination: "session" }],
    };
    expect(allowAndRemember(edit, { suggestionIndex: 0, scope: "session" }).decision.updatedPermissions).toEqual([
      { type: "setMode", mode: "acceptEdits", destination: "session" },
    ]);
    expect(allowAndRemember(bashRequest, { suggestionIndex: 1, scope: "session" }).decision.updatedPermissions).toEqual(
      [{ type: "addDirectories", directories: ["/srv/capture/ws-5e3t54b6"], destination: "session" }],
    );
  });

  it("workspace: returns the rules to store, and also stops this process from asking", () => {
    const { decision, workspaceRules } = allowAndRemember(bashRequest, {
      suggestionIndex: 0,
      scope: "workspace",
      updatedInput: { ...bashRequest.input, command: "echo same-command edited" },
    });
    expect(workspaceRules).toEqual([{ toolName: "Bash", ruleContent: "echo same-command *" }]);
    expect(decision.updatedInput).toMatchObject({ command: "echo same-command edited" });
    expect(decision.updatedPermissions?.[0]).toMatchObject({ destination: "session" });
  });

  it("workspace: refuses suggestions that are not allow rules, and unknown indexes", () => {
    expect(code(() => allowAndRemember(bashRequest, { suggestionIndex: 1, scope: "workspace" }))).toBe(
      "invalid_payload",
    );
    expect(code(() => allowAndRemember(bashRequest, { suggestionIndex: 5, scope: "session" }))).toBe("invalid_payload");
  });

  it("parses workspace rules from suggestions (MCP rules without content cover the tool)", () => {
    expect(
      workspaceRulesFromSuggestion({
        type: "addRules",
        rules: [{ toolName: "mcp__srv__tool" }],
        behavior: "allow",
        destination: "localSettings",
      }),
    ).toEqual([{ toolName: "mcp__srv__tool", ruleContent: null }]);
    expect(
      workspaceRulesFromSuggestion({
        type: "addRules",
        rules: [{ toolName: "Bash" }],
        behavior: "deny",
        destination: "session",
      }),
    ).toEqual([]);
  });
});

describe("matchesWorkspaceRule", () => {
  const bash = (command: string) => ({ tool_name: "Bash", input: { command } });
  const rule = (ruleContent: string | null, toolName = "Bash"): WorkspaceRule => ({ toolName, ruleContent });

  it("needs the exact tool name", () => {
    expect(matchesWorkspaceRule(rule(null, "mcp__srv__tool"), { tool_name: "mcp__srv__tool", input: { a: 1 } })).toBe(
      true,
    );
    expect(matchesWorkspaceRule(rule(null, "mcp__srv__tool"), { tool_name: "mcp__srv__other", input: {} })).toBe(false);
    expect(matchesWorkspaceRule(rule(null, "Bash"), { tool_name: "bash", input: { command: "ls" } })).toBe(false);
  });

  it("exact content matches only that command", () => {
    expect(matchesWorkspaceRule(rule("mytool --flag value"), bash("mytool --flag value"))).toBe(true);
    expect(matchesWorkspaceRule(rule("mytool --flag value"), bash("  mytool --flag value "))).toBe(true);
    expect(matchesWorkspaceRule(rule("mytool --flag value"), bash("mytool --flag value2"))).toBe(false);
    expect(matchesWorkspaceRule(rule("mytool --flag value"), bash("mytool --flag value; rm -rf /"))).toBe(false);
  });

  it("wildcard `echo model-wrote *`: arguments after the words, or the bare words", () => {
    const r = rule("echo model-wrote *");
    expect(matchesWorkspaceRule(r, bash("echo model-wrote hello world"))).toBe(true);
    expect(matchesWorkspaceRule(r, bash("echo model-wrote"))).toBe(true);
    expect(matchesWorkspaceRule(r, bash("echo  model-wrote  x"))).toBe(true);
    expect(matchesWorkspaceRule(r, bash("echo model-wrotex"))).toBe(false);
    expect(matchesWorkspaceRule(r, bash("echo other"))).toBe(false);
    expect(matchesWorkspaceRule(r, bash("xecho model-wrote a"))).toBe(false);
  });

  it("a wildcard never stretches over chaining, substitution or redirection", () => {
    const r = rule("echo model-wrote *");
    for (const command of [
      "echo model-wrote a; rm -rf /",
      "echo model-wrote a && curl evil",
      "echo model-wrote a | sh",
      "echo model-wrote $(id)",
      "echo model-wrote `id`",
      "echo model-wrote a\nrm -rf /",
      "echo model-wrote >> /srv/ws/out.txt",
      "echo model-wrote < /etc/passwd",
    ]) {
      expect(matchesWorkspaceRule(r, bash(command)), command).toBe(false);
    }
  });

  it("prefix `npm run test:*`: the prefix alone or followed by arguments", () => {
    const r = rule("npm run test:*");
    expect(matchesWorkspaceRule(r, bash("npm run test"))).toBe(true);
    expect(matchesWorkspaceRule(r, bash("npm run test -- --watch"))).toBe(true);
    expect(matchesWorkspaceRule(r, bash("npm run test:unit"))).toBe(false);
    expect(matchesWorkspaceRule(r, bash("npm run testx"))).toBe(false);
    expect(matchesWorkspaceRule(r, bash("npm run test && rm -rf /"))).toBe(false);
  });

  it("wildcards in the middle and escaped stars", () => {
    expect(matchesWorkspaceRule(rule("git * --dry-run"), bash("git push origin --dry-run"))).toBe(true);
    expect(matchesWorkspaceRule(rule("git * --dry-run"), bash("git push origin"))).toBe(false);
    expect(matchesWorkspaceRule(rule("ls \\*.ts"), bash("ls *.ts"))).toBe(true);
    expect(matchesWorkspaceRule(rule("ls \\*.ts"), bash("ls a.ts"))).toBe(false);
  });

  it("exactCommandRule escapes the command so it stays exact", () => {
    const r = exactCommandRule("ls *.ts && echo done:*");
    expect(r).toEqual({ toolName: "Bash", ruleContent: "ls \\*.ts && echo done:\\*" });
    expect(matchesWorkspaceRule(r, bash("ls *.ts && echo done:*"))).toBe(true);
    expect(matchesWorkspaceRule(r, bash("ls a.ts && echo done:x"))).toBe(false);
  });

  it("does not apply content rules of other tools, nor Bash requests without a command", () => {
    expect(
      matchesWorkspaceRule(rule("domain:example.com", "WebFetch"), {
        tool_name: "WebFetch",
        input: { url: "https://example.com" },
      }),
    ).toBe(false);
    expect(matchesWorkspaceRule(rule("ls"), { tool_name: "Bash", input: {} })).toBe(false);
    expect(matchesWorkspaceRule(rule(""), bash("ls"))).toBe(false);
  });
});

describe("ruleLabel", () => {
  it("writes a rule in the CLI's syntax, the bare tool name for the whole tool", () => {
    expect(ruleLabel({ toolName: "Bash", ruleContent: "npm test" })).toBe("Bash(npm test)");
    expect(ruleLabel({ toolName: "Bash", ruleContent: "touch:*" })).toBe("Bash(touch:*)");
    expect(ruleLabel({ toolName: "Read", ruleContent: null })).toBe("Read");
    expect(ruleLabel({ toolName: "mcp__srv__tool", ruleContent: "" })).toBe("mcp__srv__tool");
    expect(ruleLabel({ toolName: "WebFetch" })).toBe("WebFetch");
  });
});
