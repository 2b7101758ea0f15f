/**
 * Admission of new CLI children: by free memory first (each child holds about 200 MB), and by a
 * cap on live children. One instance per sidecar, shared by every session runner. A refusal is
 * an AppError `unavailable` whose message says why and that trying again later may work.
 */
import { readFileSync } from "node:fs";
import os from "node:os";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";

/** A slot held by one live session; released when its child is stopped for good. Idempotent. */
export interface AdmissionLease {
  release(): void;
}

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
  /** Least available memory, in bytes, left before a new child starts (CONDUIT_MIN_FREE_MB). */
  minFreeBytes: number;
  /** Available memory in bytes; default {@link readAvailableMemory}. */
  freeMemory?: () => number;
}

const MB = 1024 * 1024;

/** Creates the sidecar's admission control. */
export function createAdmission(options: AdmissionOptions): Admission {
  const freeMemory = options.freeMemory ?? readAvailableMemory;
  const holders = new Set<string>();
  return {
    get liveCount() {
      return holders.size;
    },
    admit(sessionId) {
      if (!holders.has(sessionId)) {
        if (holders.size >= options.maxLive) {
          throw new AppError(
            ErrorCode.unavailable,
            `The server is already running ${holders.size} Claude sessions, its limit. ` +
              "Try again when one of them has finished its turn (an idle one gives up its place).",
            { reason: "session_limit", live: holders.size, max: options.maxLive, retryable: true },
          );
        }
        const free = freeMemory();
        if (free < options.minFreeBytes) {
          throw new AppError(
            ErrorCode.unavailable,
            `The server has ${Math.floor(free / MB)} MB of memory available and needs ` +
              `${Math.ceil(options.minFreeBytes / MB)} MB to start another Claude session. Try again in a minute.`,
            { reason: "low_memory", freeBytes: free, minFreeBytes: options.minFreeBytes, retryable: true },
          );
        }
        holders.add(sessionId);
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
