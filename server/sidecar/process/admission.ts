/**
 * Admission of new CLI children: by a cap on live children (the server's, one person's, one
 * workspace's), then by free memory (each child holds about 200 MB). One instance per sidecar,
 * shared by every session runner. A refusal is an AppError `unavailable` whose message says why
 * and that trying again later may work; its `details.reason` names the cap (`session_limit`,
 * `user_limit`, `workspace_limit`, `low_memory`).
 *
 * Fair shares between tenants: one person's sleeping sessions cannot fill the server
 * (CONDUIT_SESSION_MAX_PER_USER), nor one workspace's (CONDUIT_SESSION_MAX_PER_WORKSPACE), and
 * when a slot has to be reclaimed ({@link pickReclaimVictim}) it is taken only from the asking
 * person's own idle sessions, or from a session idle past the cull time: never from another
 * tenant's CLI that is merely resting between two prompts.
 */
import { readFileSync } from "node:fs";
import os from "node:os";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";

/** A slot held by one live session; released when its child is stopped for good. Idempotent. */
export interface AdmissionLease {
  release(): void;
}

/** Whose a slot is: the session's creator and its workspace (unknown: counted only against the server's cap). */
export interface SlotOwner {
  userId: string;
  workspaceId: string;
}

/** Why admission refused. */
export type AdmissionRefusal = "session_limit" | "user_limit" | "workspace_limit" | "low_memory";

/** Decides whether a session may start a child now. */
export interface Admission {
  /** Takes a slot for `sessionId` or throws AppError `unavailable`. A session already holding one gets it again. */
  admit(sessionId: string): AdmissionLease;
  /** Sessions holding a slot. */
  readonly liveCount: number;
}

/** Options of {@link createAdmission}. */
export interface AdmissionOptions {
  /** Most live children at once (CONDUIT_SESSION_MAX). */
  maxLive: number;
  /** Most live children of sessions one person created (CONDUIT_SESSION_MAX_PER_USER); default no cap beyond `maxLive`. */
  maxPerUser?: number;
  /** Most live children of one workspace's sessions (CONDUIT_SESSION_MAX_PER_WORKSPACE); default no cap beyond `maxLive`. */
  maxPerWorkspace?: number;
  /** Least available memory, in bytes, left before a new child starts (CONDUIT_MIN_FREE_MB). */
  minFreeBytes: number;
  /** Available memory in bytes; default {@link readAvailableMemory}. */
  freeMemory?: () => number;
  /** Whose session this is (the hub's entry); undefined: only the server's cap applies. */
  ownerOf?: (sessionId: string) => SlotOwner | undefined;
}

const MB = 1024 * 1024;

function refuse(reason: AdmissionRefusal, message: string, details: Record<string, unknown>): AppError {
  return new AppError(ErrorCode.unavailable, message, { reason, ...details, retryable: true });
}

/** Creates the sidecar's admission control. */
export function createAdmission(options: AdmissionOptions): Admission {
  const freeMemory = options.freeMemory ?? readAvailableMemory;
  const holders = new Map<string, SlotOwner | undefined>();
  const count = (match: (owner: SlotOwner) => boolean) => {
    let n = 0;
    for (const owner of holders.values()) if (owner !== undefined && match(owner)) n++;
    return n;
  };
  return {
    get liveCount() {
      return holders.size;
    },
    admit(sessionId) {
      if (!holders.has(sessionId)) {
        const owner = options.ownerOf?.(sessionId);
        if (owner !== undefined && options.maxPerUser !== undefined) {
          const mine = count((o) => o.userId === owner.userId);
          if (mine >= options.maxPerUser) {
            throw refuse(
              "user_limit",
              `You already have ${mine} Claude sessions running, the most one person may run at once on this server ` +
                "(CONDUIT_SESSION_MAX_PER_USER). Stop one of them, or try again when one has finished its turn " +
                "(an idle one of yours gives up its place).",
              { live: mine, max: options.maxPerUser, userId: owner.userId },
            );
          }
        }
        if (owner !== undefined && options.maxPerWorkspace !== undefined) {
          const here = count((o) => o.workspaceId === owner.workspaceId);
          if (here >= options.maxPerWorkspace) {
            throw refuse(
              "workspace_limit",
              `This workspace already has ${here} Claude sessions running, the most one workspace may run at once on ` +
                "this server (CONDUIT_SESSION_MAX_PER_WORKSPACE). Stop one of them, or try again when one has finished its turn.",
              { live: here, max: options.maxPerWorkspace, workspaceId: owner.workspaceId },
            );
          }
        }
        if (holders.size >= options.maxLive) {
          throw refuse(
            "session_limit",
            `The server is already running ${holders.size} Claude sessions, its limit. ` +
              "Try again when one of them has finished its turn (an idle one gives up its place).",
            { live: holders.size, max: options.maxLive },
          );
        }
        const free = freeMemory();
        if (free < options.minFreeBytes) {
          throw refuse(
            "low_memory",
            `The server has ${Math.floor(free / MB)} MB of memory available and needs ` +
              `${Math.ceil(options.minFreeBytes / MB)} MB to start another Claude session. Try again in a minute.`,
            { freeBytes: free, minFreeBytes: options.minFreeBytes },
          );
        }
        holders.set(sessionId, owner);
      }
      let released = false;
      return {
        release() {
          if (released) return;
          released = true;
          holders.delete(sessionId);
        },
      };
    },
  };
}

/** The refusal's reason, when `error` is an admission refusal. */
export function admissionRefusalOf(error: unknown): AdmissionRefusal | undefined {
  if (!(error instanceof AppError) || error.code !== ErrorCode.unavailable) return undefined;
  const reason = (error.details as { reason?: unknown } | undefined)?.reason;
  return reason === "session_limit" || reason === "user_limit" || reason === "workspace_limit" || reason === "low_memory" ? reason : undefined;
}

/** A session whose live CLI might give up its slot. */
export interface ReclaimCandidate {
  sessionId: string;
  owner: SlotOwner;
  /** Idle (no turn running), its process up, no approval waiting. */
  idle: boolean;
  /** When it was last active (ms). */
  lastActivityAt: number;
}

/**
 * Which live CLI gives its slot to `forSession`'s, refused for `reason`; undefined when none may.
 * Only an idle one (its next prompt resumes it), and only one of the asking person's own sessions,
 * or one idle longer than the cull time (`idleCullMs`; a viewer kept it warm, nobody used it).
 * The slot must be one that frees the cap that refused: a person at their cap gets one of their
 * own; a full workspace one of that workspace's. The one idle longest goes first.
 */
export function pickReclaimVictim(
  candidates: readonly ReclaimCandidate[],
  forSession: { sessionId: string; owner: SlotOwner | undefined },
  reason: AdmissionRefusal,
  now: number,
  idleCullMs: number,
): ReclaimCandidate | undefined {
  const owner = forSession.owner;
  const stale = (c: ReclaimCandidate) => idleCullMs > 0 && now - c.lastActivityAt >= idleCullMs;
  const sameUser = (c: ReclaimCandidate) => owner !== undefined && c.owner.userId === owner.userId;
  let best: ReclaimCandidate | undefined;
  for (const c of candidates) {
    if (c.sessionId === forSession.sessionId || !c.idle) continue;
    const frees =
      reason === "user_limit" ? sameUser(c) : reason === "workspace_limit" ? owner !== undefined && c.owner.workspaceId === owner.workspaceId : true;
    if (!frees) continue;
    if (!sameUser(c) && !stale(c)) continue;
    if (best === undefined || c.lastActivityAt < best.lastActivityAt) best = c;
  }
  return best;
}

/**
 * Memory available for new processes, in bytes: `MemAvailable` of /proc/meminfo (which counts
 * reclaimable page cache, unlike `os.freemem()` on older kernels), else `os.freemem()`.
 */
export function readAvailableMemory(): number {
  try {
    const match = /^MemAvailable:\s+(\d+)\s+kB$/m.exec(readFileSync("/proc/meminfo", "utf8"));
    if (match?.[1] !== undefined) return Number(match[1]) * 1024;
  } catch {
    // not Linux, or /proc hidden
  }
  return os.freemem();
}
