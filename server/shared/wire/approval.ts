/**
 * The approval part of the Socket.IO contract. Each signed-in socket is in its user's room, so
 * every tab and device of a person sees the same inbox. The sidecar validates payloads with
 * these schemas; the browser imports the types.
 */
import { z } from "zod";

export const ApprovalCommand = {
  /** The caller's inbox: pending approvals plus the most recent decided ones. */
  list: "approval:list",
  decide: "approval:decide",
} as const;

export const ApprovalFact = {
  requested: "approval:requested",
  /** Decided, expired or cancelled. */
  resolved: "approval:resolved",
  /** The caller's number of pending approvals changed. */
  count: "approval:count",
} as const;

export type ApprovalStatus = "pending" | "allowed" | "denied" | "expired" | "cancelled";

/** One hunk of the diff between the file on disk and the proposal (ids are stable per pair). */
export interface WireHunk {
  id: string;
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  removed: string[];
  added: string[];
}

/** NotebookEdit's edit modes (the CLI's default is `replace`). */
export type NotebookEditMode = "replace" | "insert" | "delete";

/**
 * NotebookEdit: the review shows one cell's source (`original`: the cell now, `proposed`: the
 * cell after the edit), not the .ipynb file's JSON.
 */
export interface NotebookCellReview {
  editMode: NotebookEditMode;
  /** The cell's 0-based position in the notebook; for insert, where the new cell lands. */
  index: number;
  /** How to name the cell, e.g. `cell "cell-a" · code` or `new markdown cell after cell "cell-a"`. */
  label: string;
  /** The editor language of the cell's source: "markdown" for markdown cells, else the notebook's language. */
  language: string;
}

/** For Edit / Write / NotebookEdit: the file as it is and as the proposal would leave it. */
export interface FileReview {
  filePath: string;
  /** null when the file (NotebookEdit: the cell, on insert) does not exist yet. */
  original: string | null;
  proposed: string;
  hunks: WireHunk[];
  /** Set when the proposal cannot be applied as it stands (the CLI would refuse it too). */
  problem?: string;
  /** NotebookEdit: the cell under review. A delete cannot be edited, only allowed or denied. */
  cell?: NotebookCellReview;
}

/** A suggestion the CLI offers for "allow and remember". */
export interface RememberOption {
  index: number;
  label: string;
  /** A workspace rule can be stored from it (Bash and MCP rules), not only a session one. */
  workspaceScope: boolean;
}

export interface ApprovalView {
  id: string;
  sessionId: string;
  /** `rootPath`: the workspace's directory on the server (paths inside it are shown relative to it). */
  workspace: { id: string; slug: string; name: string; rootPath: string };
  sessionTitle: string | null;
  toolName: string;
  input: Record<string, unknown>;
  /** The CLI's reason for asking, when it gave one. */
  reason: string | null;
  blockedPath: string | null;
  /** Asked by a subagent (not the session's main agent): its task as the CLI described it, when it did. */
  subagent: { description: string | null } | null;
  rememberOptions: RememberOption[];
  status: ApprovalStatus;
  createdAt: string;
  /** null: never expires. */
  expiresAt: string | null;
  decidedBy: { id: string; name: string } | null;
  decidedAt: string | null;
  message: string | null;
  /** What was approved when it differed from the proposal. */
  finalInput: Record<string, unknown> | null;
  review: FileReview | null;
  /**
   * For ExitPlanMode: the plan text (the request's, the CLI's plan file, or the plan the model
   * put in its call), never guessed from other messages; null when there is none.
   */
  plan: string | null;
  /** For ExitPlanMode: where the plan came from, or why there is none, in words (null: nothing to add). */
  planNote?: string | null;
  /** Edit / Write / NotebookEdit, once allowed: the text the approver approved (the record keeps both). */
  approvedText?: string | null;
}

const ZCommandId = z.string().min(8).max(64);

export const ZListApprovals = z.object({}).strict();

export const ZDecision = z.discriminatedUnion("behavior", [
  z.object({
    behavior: z.literal("allow"),
    /** Edit / Write / NotebookEdit: the text the approver reviewed (edited, or with hunks rejected). */
    reviewedText: z.string().max(20_000_000).optional(),
    /** Bash (edited command), AskUserQuestion (answers), or any tool: the input to run instead. */
    updatedInput: z.record(z.string(), z.unknown()).optional(),
    remember: z.object({ index: z.number().int().min(0), scope: z.enum(["session", "workspace"]) }).optional(),
  }),
  z.object({
    behavior: z.literal("deny"),
    message: z.string().max(10_000).optional(),
    /** Deny and stop the turn (interrupt). */
    stop: z.boolean().optional(),
  }),
]);
export type Decision = z.infer<typeof ZDecision>;

export const ZDecide = z.object({ approvalId: z.string().min(1).max(64), decision: ZDecision, commandId: ZCommandId });
export type Decide = z.infer<typeof ZDecide>;

export interface ApprovalResolved {
  approvalId: string;
  sessionId: string;
  status: ApprovalStatus;
  decidedBy: { id: string; name: string } | null;
  message: string | null;
  decidedAt?: string | null;
  /** What was approved when it differed from the proposal. */
  finalInput?: Record<string, unknown> | null;
  /** The whole record after the change (the server always sends it). */
  approval?: ApprovalView;
}

/** The answer to `approval:list`. */
export interface ApprovalList {
  approvals: ApprovalView[];
  /** The server's clock (ISO), so a countdown can correct for a skewed browser clock. */
  now: string;
}

export interface ApprovalCount {
  pending: number;
}

// The workspace approval settings, as `GET /api/workspaces/<slug>/approval-settings` returns them.

/** A stored workspace rule with who made it; `createdBy` is null when that account is gone. */
export interface PermissionRuleView {
  id: string;
  toolName: string;
  ruleContent: string | null;
  /** The rule in the CLI's syntax, e.g. `Bash(npm test)`. */
  label: string;
  behavior: string;
  createdAt: string;
  createdBy: { id: string; name: string; email: string } | null;
}

export interface ApprovalSettingsView {
  /** seconds, or null for never */
  approvalDeadlineSec: number | null;
  /** newest first */
  rules: PermissionRuleView[];
}
