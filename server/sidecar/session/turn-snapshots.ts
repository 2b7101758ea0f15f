/**
 * Per-turn capture of a session's file changes, and taking them back. The hub calls
 * {@link TurnSnapshots.promptDelivered} before a prompt reaches the CLI and
 * {@link TurnSnapshots.turnEnded} after its turn's `result` (or when the child exits mid-turn);
 * the two snapshots of the workspace's shadow repository give every file the turn added,
 * modified or deleted, whichever tool did it. A snapshot failure never fails a turn: it is
 * logged and the turn's changes are recorded as unknown. The before-snapshot is waited for at
 * most {@link TurnSnapshotsDeps.beforeWaitMs}; a slower one is not trusted (the CLI may already
 * be writing) and its turn is unknown too.
 *
 * Take-backs (revert a file or a hunk, rewind) run here because the sidecar owns the shadow
 * repository's index and knows whether a turn is running; each is recorded as a TurnChange step,
 * so the session's latest snapshot includes it.
 *
 * Every snapshot, diff and write runs in the workspace's files door
 * (`server/workspace-agent/ops/changes.ts`), which holds the shadow repositories and the
 * work-tree watchers; this object holds only what to record and when. A door that ended (idle,
 * crashed) costs its next snapshot of each work tree a full scan, never a wrong answer.
 */
import type { Logger } from "pino";
import type { Db } from "@/server/db/client";
import { insertTurnChange, listTurnChanges, type TurnChangeRow } from "@/server/db/turn-changes";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import type {
  ChangeScope,
  ChangedFile,
  RewindEventPayload,
  RewindPreview,
  TakeBackResult,
  TurnChangesEventPayload,
} from "@/server/shared/wire/changes";
import {
  commitsOfScope,
  filesScope,
  parseRelativePath,
  rewindTarget,
  sessionCommits,
  workspaceDoor,
  type DoorInput,
  type DoorPool,
  type DoorOutput,
  type DoorScope,
  type WatchLimits,
} from "@/server/workspace-agent";

/** The session a capture is about. */
export interface SnapshotSession {
  sessionId: string;
  workspaceId: string;
  /** the workspace's directory (its door's scope) */
  workspaceRoot: string;
  /** the work tree snapshotted: the workspace root, or the session's own git worktree inside it */
  rootPath: string;
  /** the shadow repository's name (`changeRootOf`); the workspace id when absent */
  repoKey?: string;
}

export interface TurnSnapshotsDeps {
  db: Db;
  /** `CONDUIT_DATA_DIR`: shadow repositories live in its `shadow/<workspaceId>/` folder. */
  dataDir: string;
  log: Logger;
  /** The doors the snapshots run in (default: this process's, `workspaceDoor()`). */
  door?: DoorPool;
  /** How long a prompt waits for its before-snapshot (default 2 s). */
  beforeWaitMs?: number;
  /**
   * The work-tree watchers that spare snapshots a scan (`change-watcher.ts`, held by the door):
   * their limits, or false for none (every snapshot scans).
   */
  watch?: Partial<WatchLimits> | false;
}

interface OpenTurn {
  session: SnapshotSession;
  promptSeq: number;
  before: Promise<string | null>;
  /** The before-snapshot came too late to be trusted. */
  late: boolean;
}

/** Statuses in which a turn is under way: no rewind then. */
const busyStatuses: ReadonlySet<string> = new Set(["running", "awaiting-approval", "starting"]);

/** Snapshots and take-backs may take long on a big work tree (a first scan hashes every file). */
const longOpTimeoutMs = 15 * 60_000;

type ChangesOp = "changes.snapshot" | "changes.diff" | "changes.sides" | "changes.previewRewind" | "changes.takeBack";

export class TurnSnapshots {
  private readonly open = new Map<string, OpenTurn>();
  /** Per session: its turn records, in order. */
  private readonly chains = new Map<string, Promise<void>>();
  private closed = false;
  /** How the latest snapshot of each repository knew what changed (`unchanged`, `paths`, `scan`; tests and benches). */
  private readonly ways = new Map<string, "unchanged" | "paths" | "scan">();

  constructor(private readonly deps: TurnSnapshotsDeps) {}

  /**
   * A prompt is on its way to the CLI. Opens the session's turn with a before-snapshot (a prompt
   * sent while a turn is open joins that turn) and returns the wait for it: the caller awaits it
   * just before the prompt is written; it never throws and lasts at most `beforeWaitMs`.
   */
  promptDelivered(session: SnapshotSession, promptSeq: number): () => Promise<void> {
    if (this.closed || this.open.has(session.sessionId)) return async () => undefined;
    const before = this.snapshot(session, `before prompt ${promptSeq} of session ${session.sessionId}`).catch((err: unknown) => {
      this.deps.log.warn({ err, sessionId: session.sessionId }, "the before-turn snapshot failed; this turn's changes are unknown");
      return null;
    });
    const turn: OpenTurn = { session, promptSeq, before, late: false };
    this.open.set(session.sessionId, turn);
    return async () => {
      let timer: NodeJS.Timeout | undefined;
      const waited = await Promise.race([
        before.then(() => true),
        new Promise<false>((resolve) => {
          timer = setTimeout(() => resolve(false), this.deps.beforeWaitMs ?? 2_000);
        }),
      ]);
      clearTimeout(timer);
      if (!waited) {
        turn.late = true;
        this.deps.log.warn({ sessionId: session.sessionId }, "the before-turn snapshot was too slow; this turn's changes are unknown");
      }
    };
  }

  /**
   * A session's child is starting: the workspace's first snapshot (which hashes every file) is
   * taken now, in the background, so the first prompt's snapshot only looks for changes.
   */
  warm(session: SnapshotSession): void {
    if (this.closed) return;
    this.snapshot(session, `baseline for session ${session.sessionId}`).catch((err: unknown) =>
      this.deps.log.warn({ err, sessionId: session.sessionId }, "the baseline snapshot failed"),
    );
  }

  /**
   * The session's turn ended (its `result`, or the child exited). Takes the after-snapshot in the
   * background, stores the step, then hands the event payload to `emit`.
   */
  turnEnded(sessionId: string, emit: (payload: TurnChangesEventPayload) => void): void {
    const turn = this.open.get(sessionId);
    if (!turn) return;
    this.open.delete(sessionId);
    this.chain(sessionId, async () => {
      const before = turn.late ? null : await turn.before;
      let after: string | null = null;
      try {
        after = await this.snapshot(turn.session, `after prompt ${turn.promptSeq} of session ${sessionId}`);
      } catch (err) {
        this.deps.log.warn({ err, sessionId }, "the after-turn snapshot failed; this turn's changes are unknown");
      }
      let files: ChangedFile[] = [];
      let status: "ok" | "unknown" = before !== null && after !== null ? "ok" : "unknown";
      if (status === "ok") {
        try {
          files = await this.diff(turn.session, before, after!);
        } catch (err) {
          this.deps.log.warn({ err, sessionId }, "comparing a turn's snapshots failed");
          status = "unknown";
        }
      }
      const row = await insertTurnChange(this.deps.db, {
        sessionId,
        kind: "turn",
        promptSeq: turn.promptSeq,
        beforeCommit: before,
        afterCommit: after,
        status,
        files,
      });
      emit({ turnId: row.id, promptSeq: turn.promptSeq, status, files });
    });
  }

  /** Whether a turn of any session of this workspace is open in this sidecar. */
  turnOpenIn(workspaceId: string): boolean {
    for (const turn of this.open.values()) if (turn.session.workspaceId === workspaceId) return true;
    return false;
  }

  /** How the latest snapshot of a repository (`repoKey`, the workspace id by default) knew what changed. */
  lastWayOf(repoKey: string): "unchanged" | "paths" | "scan" | undefined {
    return this.ways.get(repoKey);
  }

  /** Puts one file of a change back as it was before it. */
  async revertFile(
    session: SnapshotSession,
    status: string,
    input: { scope: ChangeScope; path: string },
    actorId: string,
  ): Promise<{ event: RewindEventPayload | Record<string, unknown>; result: TakeBackResult }> {
    const file = parseRelativePath(input.path);
    this.assertIdle(session, status);
    const steps = await this.stepsOf(session.sessionId);
    const { before, after } = commitsOfScope(steps, input.scope);
    const changed = await this.diff(session, before, after);
    if (!changed.some((f) => f.path === file)) throw new AppError(ErrorCode.notFound, `${file} is not among this change's files.`);
    const outcome = await this.recordTakeBack(session, actorId, "revert", null, { type: "file", commit: before, file }, {
      path: file,
      scope: input.scope,
      what: "file",
    });
    return { event: outcome.event, result: outcome.result };
  }

  /** Reverses one hunk of a file's change on its current text. */
  async revertHunk(
    session: SnapshotSession,
    status: string,
    input: { scope: ChangeScope; path: string; hunk: number },
    actorId: string,
  ): Promise<{ event: Record<string, unknown>; result: TakeBackResult }> {
    const file = parseRelativePath(input.path);
    this.assertIdle(session, status);
    const steps = await this.stepsOf(session.sessionId);
    const { before, after } = commitsOfScope(steps, input.scope);
    const sides = await this.call(session, "changes.sides", { repoKey: this.repoOf(session).repoKey, before, after, file });
    if (sides.before.kind === "absent" && sides.after.kind === "absent") throw new AppError(ErrorCode.notFound, `${file} is not among this change's files.`);
    const outcome = await this.recordTakeBack(session, actorId, "revert", null, { type: "hunk", before, after, file, hunk: input.hunk }, {
      path: file,
      scope: input.scope,
      what: "hunk",
      hunk: input.hunk,
    });
    return { event: outcome.event, result: outcome.result };
  }

  /** A rewind's dry run: what going back to before prompt `promptSeq` changes, and the conflicts. */
  async previewRewind(session: SnapshotSession, promptSeq: number): Promise<RewindPreview> {
    const steps = await this.stepsOf(session.sessionId);
    let target: string;
    try {
      target = rewindTarget(steps, promptSeq);
    } catch (err) {
      if (!(err instanceof AppError) || err.code !== ErrorCode.notFound) throw err;
      return { promptSeq, files: [], insertions: 0, deletions: 0, conflicts: [], unavailable: err.message };
    }
    return this.call(
      session,
      "changes.previewRewind",
      {
        ...this.writerOf(session),
        message: `before a rewind of session ${session.sessionId}`,
        target,
        latest: sessionCommits(steps)?.after ?? null,
        promptSeq,
      },
      longOpTimeoutMs,
    );
  }

  /** Rewinds the workspace's files to before prompt `promptSeq`; conflicts only with `includeConflicts`. */
  async rewind(
    session: SnapshotSession,
    status: string,
    input: { promptSeq: number; includeConflicts: boolean },
    actorId: string,
  ): Promise<{ event: RewindEventPayload; result: TakeBackResult & { preview: RewindPreview } }> {
    this.assertIdle(session, status);
    const steps = await this.stepsOf(session.sessionId);
    const target = rewindTarget(steps, input.promptSeq);
    const outcome = await this.recordTakeBack(
      session,
      actorId,
      "rewind",
      input.promptSeq,
      { type: "rewind", target, latest: sessionCommits(steps)?.after ?? null, promptSeq: input.promptSeq, includeConflicts: input.includeConflicts },
      {},
    );
    const done = outcome.preview!;
    const skipped = outcome.result.skipped;
    const files = done.files.filter((f) => !skipped.includes(f.path));
    const event: RewindEventPayload = {
      promptSeq: input.promptSeq,
      files,
      insertions: files.reduce((n, f) => n + f.insertions, 0),
      deletions: files.reduce((n, f) => n + f.deletions, 0),
      skipped,
    };
    return { event, result: { ...outcome.result, preview: done } };
  }

  /**
   * Waits for the turn records under way. The work-tree watchers live in the doors and end with
   * them (when idle, or when this process's door pool closes).
   */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.chains.values()]);
  }

  /**
   * Runs a take-back in the door between two snapshots (the work tree before it, after it), and
   * stores it as a step of the session.
   */
  private async recordTakeBack(
    session: SnapshotSession,
    actorId: string,
    kind: "revert" | "rewind",
    promptSeq: number | null,
    action: DoorInput<"changes.takeBack">["action"],
    event: Record<string, unknown>,
  ): Promise<{ event: Record<string, unknown>; result: TakeBackResult; preview: RewindPreview | undefined }> {
    const done = await this.call(
      session,
      "changes.takeBack",
      {
        ...this.writerOf(session),
        messages: { before: `before a ${kind} in session ${session.sessionId}`, after: `after a ${kind} in session ${session.sessionId}` },
        action,
      },
      longOpTimeoutMs,
    );
    const result: TakeBackResult = { changed: done.changed, skipped: done.skipped };
    await insertTurnChange(this.deps.db, {
      sessionId: session.sessionId,
      kind,
      promptSeq,
      beforeCommit: done.before,
      afterCommit: done.after,
      status: "ok",
      files: done.files,
      createdById: actorId,
    });
    const auditAction = kind === "rewind" ? "session.rewind" : event.what === "hunk" ? "session.revert-hunk" : "session.revert-file";
    await this.deps.db.auditLog.create({
      data: {
        actorId,
        action: auditAction,
        objectType: "session",
        objectId: session.sessionId,
        workspaceId: session.workspaceId,
        details: JSON.stringify({ ...event, ...(promptSeq !== null ? { promptSeq } : {}), changed: result.changed, skipped: result.skipped }),
      },
    });
    return { event: { ...event, files: done.files, changed: result.changed, skipped: result.skipped }, result, preview: done.preview };
  }

  private assertIdle(session: SnapshotSession, status: string): void {
    if (busyStatuses.has(status) || this.turnOpenIn(session.workspaceId)) {
      throw new AppError(
        ErrorCode.conflict,
        "A turn is running in this workspace; wait for it to finish (or interrupt it) before taking changes back.",
      );
    }
  }

  private stepsOf(sessionId: string): Promise<TurnChangeRow[]> {
    // the turn being recorded counts: wait for it
    return (this.chains.get(sessionId) ?? Promise.resolve()).then(() => listTurnChanges(this.deps.db, sessionId));
  }

  /** A snapshot of the session's work tree (in its workspace's door). */
  private async snapshot(session: SnapshotSession, message: string): Promise<string> {
    const writer = this.writerOf(session);
    const { commit, way } = await this.call(session, "changes.snapshot", { ...writer, message }, longOpTimeoutMs);
    this.ways.set(writer.repoKey, way);
    return commit;
  }

  private diff(session: SnapshotSession, from: string | null, to: string): Promise<ChangedFile[]> {
    if (from === to) return Promise.resolve([]);
    return this.call(session, "changes.diff", { repoKey: this.repoOf(session).repoKey, from, to }, longOpTimeoutMs);
  }

  /** The session's shadow repository and work tree, as the door's operations name them. */
  private repoOf(session: SnapshotSession): { repoKey: string; workTree: string } {
    return { repoKey: session.repoKey ?? session.workspaceId, workTree: session.rootPath };
  }

  /** The same, for the operations that snapshot: with this object's watchers. */
  private writerOf(session: SnapshotSession): { repoKey: string; workTree: string; watch: Partial<WatchLimits> | false } {
    return { ...this.repoOf(session), watch: this.deps.watch ?? {} };
  }

  /** The workspace's files door (the shadow folder of this object's data directory). */
  private scopeOf(session: SnapshotSession): Promise<DoorScope> {
    return filesScope({ id: session.workspaceId, rootPath: session.workspaceRoot }, this.deps.dataDir);
  }

  private async call<K extends ChangesOp>(session: SnapshotSession, op: K, input: DoorInput<K>, timeoutMs?: number): Promise<DoorOutput<K>> {
    return (this.deps.door ?? workspaceDoor()).call(await this.scopeOf(session), op, input, timeoutMs === undefined ? {} : { timeoutMs });
  }

  private chain(sessionId: string, fn: () => Promise<void>): void {
    const next = (this.chains.get(sessionId) ?? Promise.resolve())
      .then(fn)
      .catch((err: unknown) => this.deps.log.error({ err, sessionId }, "recording a turn's changes failed"));
    this.chains.set(sessionId, next);
    void next.then(() => {
      if (this.chains.get(sessionId) === next) this.chains.delete(sessionId);
    });
  }
}
