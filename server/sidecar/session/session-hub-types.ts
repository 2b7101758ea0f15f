/**
 * The types the session hub's parts share with its callers: who acts, what a new session needs,
 * what the hub is made of (`SessionHubDeps`). Types only.
 */
import type { Logger } from "pino";
import type { Db } from "@/server/db/client";
import type { McpSpawnServer } from "@/server/domain/workspace/mcp-servers";
import type { CostTurn } from "@/server/domain/cost/cost-reducer";
import type { EventPageLimits } from "@/server/db/session-events";
import type { PermissionModeChoice, SubscribeResult } from "@/server/shared/wire/session";
import type { SessionLeases } from "@/server/sidecar/cluster/session-leases";
import type { SessionEventWriter } from "./session-event-writer";
import type { DecidedPermission, PermissionDecider, PermissionQuestion, SessionRunner, SessionRunnerOptions } from "./session-runner-contract";
import type { TurnSnapshots } from "./turn-snapshots";

/** What `createSession` needs besides who asks and where. */
export interface NewSessionInput {
  mode: PermissionModeChoice;
  model?: string | undefined;
  maxBudgetUsd?: number | undefined;
  /** Start in a git worktree of its own (server/workspace-git/session-worktree.ts). */
  worktree?: boolean | undefined;
  commandId: string;
}

/**
 * Makes the runner of one session; the hub starts, drives and disposes it. `decidePermission`
 * is the hub's: it logs every decision before the runner writes it to the CLI.
 */
export type CreateRunner = (options: SessionRunnerOptions, decidePermission: PermissionDecider) => SessionRunner;

/** Decides a permission question of a session (the approval queue, once there is one). */
export type SessionPermissionDecider = (
  /**
   * `rootPath`: the workspace's root (it never changes), so the decider can read files before its
   * own lookups end; `configDir`: the CLI's config directory (where ExitPlanMode's plan file is).
   */
  session: { sessionId: string; workspaceId: string; rootPath: string; configDir?: string },
  question: PermissionQuestion,
) => Promise<DecidedPermission>;

/** The person a command comes from. */
export interface Actor {
  id: string;
  name: string;
}

export interface SessionHubDeps {
  db: Db;
  createRunner: CreateRunner;
  /** `<CONDUIT_DATA_DIR>/claude-config`: each workspace's CLAUDE_CONFIG_DIR is a directory in it. */
  configRoot: string;
  /** Recorded on the Session rows this sidecar owns. */
  sidecarId?: string | null;
  log: Logger;
  /** Defaults to a writer on `db`. */
  writer?: SessionEventWriter;
  /** Passed to every runner. */
  includePartialMessages?: boolean;
  /** A workspace's MCP servers for a spawn (`mcp-config.ts`); default none. */
  mcpServersOf?: (workspaceId: string) => Promise<readonly McpSpawnServer[]>;
  /**
   * Answers the CLI's `can_use_tool` questions. Without one, every question is denied with a
   * message saying why (the CLI would otherwise wait forever); permission modes that need no
   * approval (acceptEdits for edits, bypassPermissions) still let work proceed.
   */
  decidePermission?: SessionPermissionDecider;
  /** The clock for budgets and cost entries; defaults to `Date.now`. */
  now?: () => number;
  /** Page size of `subscribe`; defaults to the wire contract's `subscribePage`. */
  subscribePage?: EventPageLimits;
  /** Snapshots the workspace around each turn (the Changes view); none: changes are not recorded. */
  turnSnapshots?: TurnSnapshots;
  /** Session ownership in a cluster (server/sidecar/cluster/session-leases.ts); none: this hub runs whatever it is asked. */
  leases?: SessionLeases;
  /** Whether anyone has a session open, on any sidecar (its runners keep a watched idle child); none: never. */
  watched?: (sessionId: string) => Promise<boolean>;
  /** CONDUIT_IDLE_CULL_SEC in ms: an idle CLI past it may give its slot to anyone's session (`reclaimIdleChild`); none: only the same person's. */
  idleCullMs?: number;
  /** CONDUIT_SESSION_EVENTS_MAX: past it a session takes no new prompt; none: unbounded. */
  eventsMax?: number;
  /** Each turn's cost as its result is read (the credential proxy's `reportResult`). */
  onTurnCost?: (sessionId: string, turn: CostTurn) => void;
}

/** What `subscribe` hands to its `deliver` callback. */
export type SubscribeSnapshot = Omit<SubscribeResult, "viewers">;
