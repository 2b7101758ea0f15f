import { z } from "zod";
import type { CanUseToolRequest, JsonObject, PermissionUpdate } from "@/server/shared/claude-protocol/messages";
import {
  type PermissionDecision,
  type PermissionUpdateInput,
  ZPermissionDecision,
  ZPermissionUpdate,
} from "@/server/shared/claude-protocol/encode";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";

/**
 * The answers a person can give to a `can_use_tool` request, built as the CLI expects them
 * (protocol reference §5.1, §6.1) and checked against {@link ZPermissionDecision} before they
 * leave this module: a bad answer is refused here with `invalid_payload`, never written.
 */

/** An `allow` answer. */
export type AllowDecision = Extract<PermissionDecision, { behavior: "allow" }>;
/** A `deny` answer. */
export type DenyDecision = Extract<PermissionDecision, { behavior: "deny" }>;

/** The part of a request the answers depend on. */
export type AnswerableRequest = Pick<CanUseToolRequest, "tool_name" | "input" | "permission_suggestions">;

/** The message sent when an approver denies without writing one. */
export const DEFAULT_DENY_MESSAGE = "The user denied this tool call in Conduit.";

/** The message sent with "keep planning" when the approver writes none. */
export const DEFAULT_KEEP_PLANNING_MESSAGE = "The user wants you to keep planning: the plan was not approved yet.";

/** The message sent when every change of a file review was rejected. */
export const ALL_CHANGES_REJECTED_MESSAGE = "The user rejected every change of this edit in Conduit.";

/** Allow, running `updatedInput` (the request's own input when omitted). */
export function allowRequest(request: AnswerableRequest, updatedInput?: JsonObject): AllowDecision {
  return allow({ behavior: "allow", updatedInput: asJson(updatedInput ?? request.input) });
}

/** Allow a Bash call with the command the approver edited (description and options kept). */
export function allowBashCommand(request: AnswerableRequest, command: string): AllowDecision {
  if (request.tool_name !== "Bash") {
    throw new AppError(ErrorCode.invalidPayload, `Only a Bash call has a command to edit, not ${request.tool_name}.`);
  }
  if (command.trim() === "") throw new AppError(ErrorCode.invalidPayload, "The command must not be empty.");
  return allowRequest(request, { ...request.input, command });
}

/**
 * Deny. A blank message becomes {@link DEFAULT_DENY_MESSAGE}, because the model reads it as
 * the tool's result. With `stop`, the turn also ends (`interrupt: true`); the CLI then shows
 * the model its standard rejection text instead of the message, but the record keeps it.
 */
export function denyRequest(options: { message?: string; stop?: boolean } = {}): DenyDecision {
  const message = options.message?.trim() ? options.message : DEFAULT_DENY_MESSAGE;
  const decision: DenyDecision = { behavior: "deny", message };
  if (options.stop) decision.interrupt = true;
  return deny(decision);
}

/** Deny and stop the turn (`interrupt: true`). */
export function denyAndStop(message?: string): DenyDecision {
  return denyRequest({ message, stop: true });
}

/** ExitPlanMode: approve the plan. The CLI leaves plan mode (for `default`). */
export function approvePlan(request: AnswerableRequest): AllowDecision {
  return allowRequest(request);
}

/** ExitPlanMode: keep planning. The model reads the approver's message; plan mode stays. */
export function keepPlanning(message?: string): DenyDecision {
  return denyRequest({ message: message?.trim() ? message : DEFAULT_KEEP_PLANNING_MESSAGE });
}

// ---------------------------------------------------------------------------------------------
// AskUserQuestion

const ZQuestionInput = z.looseObject({
  questions: z
    .array(
      z.looseObject({
        question: z.string().min(1),
        options: z.array(z.looseObject({ label: z.string() })).optional(),
        multiSelect: z.boolean().optional(),
      }),
    )
    .min(1),
});

/**
 * Joins several chosen labels the way the CLI does for a multi-select answer: `", "` between
 * them, and a label that itself holds `", "` or `"` written as a JSON string so the CLI can
 * split the answer back into labels.
 */
export function joinMultiSelect(labels: readonly string[]): string {
  return labels.map((l) => (l.includes(", ") || l.includes('"') ? JSON.stringify(l) : l)).join(", ");
}

/**
 * AskUserQuestion: allow with `updatedInput` = the input plus `answers`, keyed by the exact
 * question text. Every question needs an answer: an option label, free text (the CLI's
 * "Other"), or for a multi-select question several of them, joined by {@link joinMultiSelect}.
 */
export function answerQuestions(
  request: AnswerableRequest,
  answers: Readonly<Record<string, string | readonly string[]>>,
): AllowDecision {
  const parsed = ZQuestionInput.safeParse(request.input);
  if (request.tool_name !== "AskUserQuestion" || !parsed.success) {
    throw new AppError(ErrorCode.invalidPayload, "This request does not ask questions.");
  }
  // The CLI refuses an answer that changes a field the model sent; it could not be overridden.
  if (Object.hasOwn(request.input, "answers")) {
    throw new AppError(ErrorCode.invalidPayload, "This request already carries answers.");
  }
  const questions = parsed.data.questions;
  const known = new Set(questions.map((q) => q.question));
  const unknown = Object.keys(answers).filter((q) => !known.has(q));
  if (unknown.length > 0) {
    throw new AppError(ErrorCode.invalidPayload, `Not a question of this request: ${unknown.join("; ")}`);
  }
  const out: Record<string, string> = {};
  for (const q of questions) {
    const answer = answers[q.question];
    const labels = typeof answer === "string" ? [answer] : (answer ?? []);
    if (labels.length === 0 || labels.some((l) => l.trim() === "")) {
      throw new AppError(ErrorCode.invalidPayload, `Answer the question "${q.question}".`);
    }
    if (labels.length > 1 && !q.multiSelect) {
      throw new AppError(ErrorCode.invalidPayload, `"${q.question}" takes a single answer.`);
    }
    out[q.question] = joinMultiSelect(labels);
  }
  return allowRequest(request, { ...request.input, answers: out });
}

// ---------------------------------------------------------------------------------------------
// Expiry

/** How long a deadline is, in words: "10 minutes", "1 minute", "90 seconds". */
export function describeDeadline(deadlineSeconds: number): string {
  if (deadlineSeconds >= 60 && deadlineSeconds % 60 === 0) {
    const minutes = deadlineSeconds / 60;
    return `${minutes} minute${minutes === 1 ? "" : "s"}`;
  }
  return `${deadlineSeconds} second${deadlineSeconds === 1 ? "" : "s"}`;
}

/** The message the model reads when nobody answered in time. */
export function expiryMessage(deadlineSeconds: number): string {
  return `This request expired unanswered after ${describeDeadline(deadlineSeconds)}; nobody approved it in Conduit.`;
}

/** The deny Conduit sends at the deadline. The turn goes on (no interrupt). */
export function expiryDenial(deadlineSeconds: number): DenyDecision {
  return deny({ behavior: "deny", message: expiryMessage(deadlineSeconds) });
}

// ---------------------------------------------------------------------------------------------
// Remembering

/** Where "allow and remember" keeps the permission. */
export const RememberScope = {
  /** For the rest of this CLI process (`updatedPermissions`, destination `session`). */
  session: "session",
  /** As a workspace rule Conduit applies to every later session, and to this one. */
  workspace: "workspace",
} as const;
/** One of {@link RememberScope}. */
export type RememberScope = (typeof RememberScope)[keyof typeof RememberScope];

/** An allow rule stored for a workspace (`PermissionRule`). Null content: the whole tool. */
export interface WorkspaceRule {
  toolName: string;
  ruleContent: string | null;
}

/** A rule in the CLI's own syntax: `Bash(npm test)`, or the bare tool name for the whole tool. */
export function ruleLabel(rule: { toolName: string; ruleContent?: string | null }): string {
  return rule.ruleContent ? `${rule.toolName}(${rule.ruleContent})` : rule.toolName;
}

/**
 * Allow, and remember one of the request's `permission_suggestions` (by index).
 *
 * The CLI's suggestions name `localSettings`, which writes `.claude/settings.local.json` into
 * the workspace. Conduit never does: the permission goes to the CLI with destination
 * `session` (so this process stops asking), and for the workspace scope the rules come back
 * as {@link WorkspaceRule}s for the caller to store. Only `addRules` with `allow` can be a
 * workspace rule; a mode or directory suggestion can only be remembered for the session.
 */
export function allowAndRemember(
  request: AnswerableRequest,
  options: { suggestionIndex: number; scope: RememberScope; updatedInput?: JsonObject },
): { decision: AllowDecision; workspaceRules: WorkspaceRule[] } {
  const suggestion = request.permission_suggestions?.[options.suggestionIndex];
  if (suggestion === undefined) {
    throw new AppError(ErrorCode.invalidPayload, "That suggestion is not offered for this request.");
  }
  const workspaceRules = options.scope === RememberScope.workspace ? workspaceRulesFromSuggestion(suggestion) : [];
  if (options.scope === RememberScope.workspace && workspaceRules.length === 0) {
    throw new AppError(
      ErrorCode.invalidPayload,
      "Only an allow rule can be remembered for the workspace; keep this one for the session.",
    );
  }
  const decision = allow({
    behavior: "allow",
    updatedInput: asJson(options.updatedInput ?? request.input),
    updatedPermissions: [forSession(suggestion)],
  });
  return { decision, workspaceRules };
}

/** The workspace rules an `addRules`/`allow` suggestion stands for (none for other suggestions). */
export function workspaceRulesFromSuggestion(suggestion: PermissionUpdate): WorkspaceRule[] {
  if (suggestion.type !== "addRules" || suggestion.behavior !== "allow") return [];
  return suggestion.rules
    .filter((r) => r.toolName !== "")
    .map((r) => ({ toolName: r.toolName, ruleContent: r.ruleContent ?? null }));
}

/**
 * A rule for exactly this Bash command, in the CLI's rule syntax (`*` and `\` escaped, so the
 * command is never read as a wildcard or a `:*` prefix).
 */
export function exactCommandRule(command: string): WorkspaceRule {
  return { toolName: "Bash", ruleContent: command.trim().replace(/[\\*]/g, (c) => `\\${c}`) };
}

/** Copies a suggestion field by field (the CLI may add fields the encoder refuses) to `session`. */
function forSession(suggestion: PermissionUpdate): PermissionUpdateInput {
  const destination = "session" as const;
  let update: PermissionUpdateInput;
  switch (suggestion.type) {
    case "setMode":
      update = { type: suggestion.type, mode: suggestion.mode, destination };
      break;
    case "addDirectories":
    case "removeDirectories":
      update = { type: suggestion.type, directories: [...suggestion.directories], destination };
      break;
    default:
      update = {
        type: suggestion.type,
        rules: suggestion.rules.map((r) =>
          r.ruleContent === undefined ? { toolName: r.toolName } : { toolName: r.toolName, ruleContent: r.ruleContent },
        ),
        behavior: suggestion.behavior,
        destination,
      };
  }
  const parsed = ZPermissionUpdate.safeParse(update);
  if (!parsed.success) {
    throw new AppError(
      ErrorCode.invalidPayload,
      "That suggestion cannot be sent back to the CLI.",
      parsed.error.issues,
    );
  }
  return parsed.data;
}

// ---------------------------------------------------------------------------------------------
// Matching stored workspace rules

/**
 * What a wildcard or a `:*` prefix may stand for: arguments only. Anything that could chain,
 * substitute or redirect (`;`, `&`, `|`, `<`, `>`, backquote, `$`, parentheses, line breaks)
 * is never covered, as the CLI checks each part of a compound command and every redirect on
 * its own; Conduit cannot, so it refuses to let a rule stretch over them.
 */
const ARGUMENTS = "[^;&|<>`$()\\n\\r]*";

/**
 * True when a stored workspace rule allows this request, in the CLI's rule syntax and never
 * wider: the tool name must be equal; a rule without content covers the whole tool; Bash
 * content is an exact command, a `prefix:*` rule (the prefix alone or followed by a space and
 * arguments), or a wildcard pattern where `*` stands for arguments (a trailing ` *` also
 * matches the bare command, like the CLI). Content rules of other tools are not applied.
 */
export function matchesWorkspaceRule(
  rule: WorkspaceRule,
  request: Pick<CanUseToolRequest, "tool_name" | "input">,
): boolean {
  if (rule.toolName !== request.tool_name) return false;
  if (rule.ruleContent === null) return true;
  if (request.tool_name !== "Bash") return false;
  const command = request.input.command;
  if (typeof command !== "string" || command.trim() === "") return false;
  return matchesBashRule(rule.ruleContent, command.trim());
}

function matchesBashRule(content: string, command: string): boolean {
  const rule = content.trim();
  if (rule === "") return false;
  const prefix = /^(.+):\*$/s.exec(rule)?.[1];
  if (prefix !== undefined) {
    const p = prefix.trimEnd();
    if (command === p) return true;
    return command.startsWith(`${p} `) && new RegExp(`^${ARGUMENTS}$`).test(command.slice(p.length));
  }
  const parts = splitOnWildcards(rule);
  if (parts.length === 1) return command === parts[0];
  // The CLI collapses runs of blanks on both sides before matching a wildcard rule.
  const collapse = (s: string) => s.replace(/[ \t]{2,}|\t/g, " ");
  const literals = parts.map((p) => escapeRegExp(collapse(p)));
  let source: string;
  if (parts.length === 2 && parts[1] === "" && parts[0]!.endsWith(" ")) {
    source = `${escapeRegExp(collapse(parts[0]!).slice(0, -1))}(?: ${ARGUMENTS})?`;
  } else {
    source = literals.join(ARGUMENTS);
  }
  return new RegExp(`^${source}$`, "s").test(collapse(command));
}

/** Splits on unescaped `*`; `\*` and `\\` become literal characters. */
function splitOnWildcards(rule: string): string[] {
  const parts: string[] = [];
  let current = "";
  for (let i = 0; i < rule.length; i++) {
    const c = rule[i]!;
    const next = rule[i + 1];
    if (c === "\\" && (next === "*" || next === "\\")) {
      current += next;
      i++;
    } else if (c === "*") {
      parts.push(current);
      current = "";
    } else {
      current += c;
    }
  }
  parts.push(current);
  return parts;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

// ---------------------------------------------------------------------------------------------

/** Typed as JSON here; {@link check} proves it before anything leaves the module. */
function asJson(input: JsonObject): AllowDecision["updatedInput"] {
  return input as AllowDecision["updatedInput"];
}

function allow(decision: AllowDecision): AllowDecision {
  return check(decision) as AllowDecision;
}

function deny(decision: DenyDecision): DenyDecision {
  return check(decision) as DenyDecision;
}

function check(decision: PermissionDecision): PermissionDecision {
  const parsed = ZPermissionDecision.safeParse(decision);
  if (!parsed.success) {
    throw new AppError(ErrorCode.invalidPayload, "This answer cannot be sent to the CLI.", parsed.error.issues);
  }
  return parsed.data;
}
