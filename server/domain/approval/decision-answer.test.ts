import { describe, expect, it } from "vitest";
import type { CanUseToolRequest } from "@/server/shared/claude-protocol/messages";
import { AppError } from "@/server/shared/errors/app-error";
import type { FileReview } from "@/server/shared/wire/approval";
import { ALL_CHANGES_REJECTED_MESSAGE } from "./answers";
import { answerFor, type PendingQuestion } from "./decision-answer";

function request(tool_name: string, input: Record<string, unknown>, extra: Partial<CanUseToolRequest> = {}): CanUseToolRequest {
  return { subtype: "can_use_tool", tool_name, input, ...extra } as CanUseToolRequest;
}

const editInput = { file_path: "/w/a.txt", old_string: "one", new_string: "two" };
const editReview: FileReview = { filePath: "/w/a.txt", original: "one\n", proposed: "two\n", hunks: [] };
const pendingEdit: PendingQuestion = { request: request("Edit", editInput), review: editReview, disk: "one\n" };

describe("answerFor", () => {
  it("denies with the message, and stops when asked", () => {
    const out = answerFor(pendingEdit, { behavior: "deny", message: "no", stop: true });
    expect(out.answer).toMatchObject({ behavior: "deny", message: "no", interrupt: true });
    expect(out.review).toBeNull();
    expect(out.workspaceRules).toEqual([]);
  });

  it("keeps planning on a plain deny of ExitPlanMode", () => {
    const plan: PendingQuestion = { request: request("ExitPlanMode", { plan: "p" }), review: null, disk: null };
    const out = answerFor(plan, { behavior: "deny", message: "more detail" });
    expect(out.answer.behavior).toBe("deny");
    expect(out.answer.behavior === "deny" && out.answer.interrupt).toBeFalsy();
    expect(out.answer.behavior === "deny" && out.answer.message).toContain("more detail");
  });

  it("allows as asked with the request's input", () => {
    const out = answerFor({ request: request("Read", { file_path: "/w/x" }), review: null, disk: null }, { behavior: "allow" });
    expect(out.answer).toEqual({ behavior: "allow", updatedInput: { file_path: "/w/x" } });
  });

  it("allows an edited Bash command", () => {
    const bash: PendingQuestion = { request: request("Bash", { command: "rm -rf x", description: "d" }), review: null, disk: null };
    const out = answerFor(bash, { behavior: "allow", updatedInput: { command: "ls x" } });
    expect(out.answer).toMatchObject({ behavior: "allow", updatedInput: { command: "ls x", description: "d" } });
  });

  it("applies a reviewed file text and records the review", () => {
    const out = answerFor(pendingEdit, { behavior: "allow", reviewedText: "three\n" });
    expect(out.answer.behavior).toBe("allow");
    expect(out.review).toEqual({ filePath: "/w/a.txt", proposed: "two\n", approved: "three\n" });
  });

  it("turns a review that rejects every change into a deny", () => {
    const out = answerFor(pendingEdit, { behavior: "allow", reviewedText: "one\n" });
    expect(out.answer).toMatchObject({ behavior: "deny", message: ALL_CHANGES_REJECTED_MESSAGE });
    expect(out.review).toBeNull();
  });

  it("refuses a reviewed text that cannot be applied with invalid_payload", () => {
    const invalid: PendingQuestion = { ...pendingEdit, request: request("Edit", { file_path: "/w/a.txt" }) };
    let error: unknown;
    try {
      answerFor(invalid, { behavior: "allow", reviewedText: "three\n" });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe("invalid_payload");
  });

  it("remembers a workspace rule from the chosen suggestion", () => {
    const bash = request(
      "Bash",
      { command: "npm test" },
      { permission_suggestions: [{ type: "addRules", rules: [{ toolName: "Bash", ruleContent: "npm test" }], behavior: "allow", destination: "localSettings" }] },
    );
    const out = answerFor({ request: bash, review: null, disk: null }, { behavior: "allow", remember: { index: 0, scope: "workspace" } });
    expect(out.answer.behavior).toBe("allow");
    expect(out.workspaceRules).toEqual([{ toolName: "Bash", ruleContent: "npm test" }]);
  });
});
