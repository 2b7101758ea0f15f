/**
 * The contract between the session runner (one per live session, owns the CLI child through
 * the supervisor) and the layers above it (event log, sockets, approvals, cost). The runner
 * implements it; the layers above depend only on this file, so they can be tested with a fake.
 */
import type { CanUseToolRequest, CliMessage, PermissionMode } from "@/server/shared/claude-protocol/messages";
import type { HostControlRequest, PermissionDecision } from "@/server/shared/claude-protocol/encode";
import type { SessionState } from "@/server/domain/session/session-state";
import type { NetworkPolicy } from "@/server/domain/workspace/network-policy";
import type { McpSpawnServer } from "@/server/domain/workspace/mcp-servers";

/** How a runner starts its CLI child. */
export interface SessionRunnerOptions {
  /** Conduit's session id (Session.id). */
  sessionId: string;
  /** The workspace root (the sandbox's read-write directory), and the child's cwd unless `cwd` is given. */
  workspaceRoot: string;
  /** cwd of the CLI child when it is not the workspace root: the session's own git worktree inside it. */
  cwd?: string;
  /** The per-workspace CLAUDE_CONFIG_DIR under Conduit's data directory. */
  configDir: string;
  /** The CLI's conversation id; with `resume`, the child starts with `--resume <id>`, else `--session-id <id>`. */
  claudeSessionId: string;
  resume: boolean;
  permissionMode: PermissionMode;
  model?: string;
  /** Start with --allow-dangerously-skip-permissions (workspace owner enabled bypass). */
  allowBypass?: boolean;
  /** --include-partial-messages (streamed tokens); on by default. */
  includePartialMessages?: boolean;
  /** --max-budget-usd */
  maxBudgetUsd?: number;
  /** The workspace's own `.claude/settings*.json` apply (an owner trusted them); default untrusted. */
  workspaceSettings?: "untrusted" | "trusted";
  /**
   * Asked before every spawn (restarts included): true while the workspace's settings files are
   * exactly the ones an owner trusted. A session can rewrite those files, so a decision made at
   * creation would not hold for its next process.
   */
  settingsTrusted?: () => Promise<boolean>;
  /** The workspace's network policy, asked before every spawn (restarts included); default open. */
  networkPolicy?: () => Promise<NetworkPolicy>;
  /** The workspace's MCP servers (secrets open), asked before every spawn: `--mcp-config` (see `mcp-config.ts`); default none. */
  mcpServers?: () => Promise<readonly McpSpawnServer[]>;
  /**
   * True while someone has the session open (a browser subscribed, on any sidecar). Asked when an
   * idle child is due to be culled: a watched one is kept, so its next turn starts warm, and is
   * asked again later; default: never watched (idle children are culled on time).
   */
  watched?: () => Promise<boolean>;
}

/** A prompt as the runner writes it. */
export interface PromptInput {
  uuid: string;
  text: string;
  images?: readonly { mediaType: "image/png" | "image/jpeg" | "image/gif" | "image/webp"; data: string }[];
}

/** A permission question from the CLI, handed to the owner of the runner. */
export interface PermissionQuestion {
  requestId: string;
  request: CanUseToolRequest;
  /**
   * The subagent that asked (the request's `agent_id`), with its task as the CLI described it in
   * `system/task_started` (null when this process never reported that task). Absent: the main agent.
   */
  agent?: { id: string; description: string | null };
  /**
   * ExitPlanMode: the `plan` the model put in this tool call, as the CLI streamed it (matched by
   * `tool_use_id`). The CLI's request carries only what it kept: `input: {}` when the model wrote
   * no plan file (`plan` and `planFilePath` when it did).
   */
  streamedPlan?: string;
  /** Aborted when the CLI cancels the request (interrupt) or the process exits. */
  signal: AbortSignal;
}

/**
 * A decision as the session's decider gives it: what goes to the CLI, and the person who made it
 * (absent when a rule, the deadline or a cancel answered). The runner sends only the decision.
 */
export type DecidedPermission = PermissionDecision & { decidedBy?: { id: string; name: string } };

/** Answers permission questions; the runner writes the decision to the CLI. */
export type PermissionDecider = (question: PermissionQuestion) => Promise<PermissionDecision>;

/** Everything a runner reports, in the order it happened. */
export type RunnerEvent =
  /** One stdout line of the CLI, decoded (unknown types arrive as `type: "unknown"`). */
  | { type: "line"; raw: string; message: CliMessage }
  /** A stdout line that is not valid protocol (bad JSON, too long); kept for the log. */
  | { type: "bad-line"; raw: string; error: string }
  /** A stderr line. */
  | { type: "stderr"; text: string }
  /** The session state after a change. */
  | { type: "state"; state: SessionState }
  /** The CLI child started (pid) or ended. */
  | { type: "process"; phase: "spawned"; pid: number; resumed: boolean }
  | { type: "process"; phase: "exited"; pid: number; code: number | null; signal: string | null; expected: boolean; reason?: string };

/** One live session's CLI child, supervised. */
export interface SessionRunner {
  readonly sessionId: string;
  readonly state: SessionState;
  /** Spawns the child (admission checked first; a refusal is an AppError `unavailable`). */
  start(): Promise<void>;
  /**
   * Writes a prompt; resumes a culled or stopped child first. Resolves once it is on stdin.
   * Images follow the text as base64 image blocks.
   */
  prompt(input: PromptInput): Promise<void>;
  interrupt(): Promise<void>;
  /** Resolves with the mode the CLI confirmed; a refusal is a typed error. */
  setPermissionMode(mode: PermissionMode): Promise<PermissionMode>;
  setModel(model: string | undefined): Promise<string>;
  /**
   * Sends a control request to the live child and resolves with the CLI's answer. Without a
   * live child it rejects (`conflict`): these requests are about the running process.
   */
  control(request: HostControlRequest): Promise<Record<string, unknown>>;
  /** Stops the child politely (stdin end, SIGTERM, SIGKILL to the group). */
  stop(): Promise<void>;
  /**
   * Sends one control request to the live child (`rename_session`, `stop_task`, …) and resolves
   * with its answer; undefined when no child is live (there is nobody to ask).
   */
  control(request: HostControlRequest): Promise<Record<string, unknown> | undefined>;
  /** Listeners are called synchronously, in order; returns an unsubscribe function. */
  onDidEvent(listener: (event: RunnerEvent) => void): () => void;
  /** Stops the child if needed and clears every timer. */
  dispose(): Promise<void>;
}
