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
import { commitsOfScope, rewindTarget, sessionCommits } from "@/server/workspace-changes/change-scope";
import { WorkTreeWatchers, type WatchLimits } from "@/server/workspace-changes/change-watcher";
import { shadowRepoOf, type ShadowRepo } from "@/server/workspace-changes/shadow-repo";
import { planRewind, restoreFile, revertHunk, snapshotSide } from "@/server/workspace-changes/take-back";
import { parseRelativePath } from "@/server/workspace-fs/workspace-path";

/** The session a capture is about. */
export interface SnapshotSession {
  sessionId: string;
  workspaceId: string;
  /** the work tree snapshotted: the workspace root, or the session's own git worktree */
  rootPath: string;
  /** the shadow repository's name (`changeRootOf`); the workspace id when absent */
  repoKey?: string;
}

export interface TurnSnapshotsDeps {
  db: Db;
  /** `CONDUIT_DATA_DIR`: shadow repositories live in its `shadow/` folder. */
  dataDir: string;
  log: Logger;
  /** How long a prompt waits for its before-snapshot (default 2 s). */
  beforeWaitMs?: number;
  /**
   * The work-tree watchers that spare snapshots a scan (`change-watcher.ts`): their limits, or
   * false for none (every snapshot scans).
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

export class TurnSnapshots {
  private readonly open = new Map<string, OpenTurn>();
  /** Per session: its turn records, in order. */
  private readonly chains = new Map<string, Promise<void>>();
  private closed = false;
  /** One watcher per snapshotted work tree, closed with this object. */
  private readonly watchers: WorkTreeWatchers | undefined;

  constructor(private readonly deps: TurnSnapshotsDeps) {
    this.watchers = deps.watch === false ? undefined : new WorkTreeWatchers(deps.watch ?? {});
  }

  /**
   * A prompt is on its way to the CLI. Opens the session's turn with a before-snapshot (a prompt
   * sent while a turn is open joins that turn) and returns the wait for it: the caller awaits it
   * just before the prompt is written; it never throws and lasts at most `beforeWaitMs`.
   */
  promptDelivered(session: SnapshotSession, promptSeq: number): () => Promise<void> {
    if (this.closed || this.open.has(session.sessionId)) return async () => undefined;
    const repo = this.repoOf(session);
    const before = repo.snapshot(`before prompt ${promptSeq} of session ${session.sessionId}`).catch((err: unknown) => {
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
    this.repoOf(session)
      .snapshot(`baseline for session ${session.sessionId}`)
      .catch((err: unknown) => this.deps.log.warn({ err, sessionId: session.sessionId }, "the baseline snapshot failed"));
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
      const repo = this.repoOf(turn.session);
      const before = turn.late ? null : await turn.before;
      let after: string | null = null;
      try {
        after = await repo.snapshot(`after prompt ${turn.promptSeq} of session ${sessionId}`);
      } catch (err) {
        this.deps.log.warn({ err, sessionId }, "the after-turn snapshot failed; this turn's changes are unknown");
      }
      let files: ChangedFile[] = [];
      let status: "ok" | "unknown" = before !== null && after !== null ? "ok" : "unknown";
      if (status === "ok") {
        try {
          files = await repo.diff(before, after!);
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
    const repo = this.repoOf(session);
    const changed = await repo.diff(before, after);
    if (!changed.some((f) => f.path === file)) throw new AppError(ErrorCode.notFound, `${file} is not among this change's files.`);
    return this.recordTakeBack(session, actorId, "revert", null, async () => {
      await restoreFile(repo, { root: session.rootPath }, before, file);
      return { changed: [file], skipped: [] };
    }, { path: file, scope: input.scope, what: "file" });
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
    const repo = this.repoOf(session);
    const [beforeSide, afterSide] = await Promise.all([snapshotSide(repo, before, file), snapshotSide(repo, after, file)]);
    if (beforeSide.kind === "absent" && afterSide.kind === "absent") throw new AppError(ErrorCode.notFound, `${file} is not among this change's files.`);
    return this.recordTakeBack(session, actorId, "revert", null, async () => {
      await revertHunk({ root: session.rootPath }, file, beforeSide, afterSide, input.hunk);
      return { changed: [file], skipped: [] };
    }, { path: file, scope: input.scope, what: "hunk", hunk: input.hunk });
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
    const repo = this.repoOf(session);
    const current = await repo.snapshot(`before a rewind of session ${session.sessionId}`);
    return planRewind(repo, { target, current, latest: sessionCommits(steps)?.after ?? null }, promptSeq);
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
    const repo = this.repoOf(session);
    let preview: RewindPreview | undefined;
    let skipped: string[] = [];
    const outcome = await this.recordTakeBack(session, actorId, "rewind", input.promptSeq, async (current) => {
      preview = await planRewind(repo, { target, current, latest: sessionCommits(steps)?.after ?? null }, input.promptSeq);
      const conflicts = new Set(preview.conflicts);
      const changed: string[] = [];
      skipped = [];
      for (const file of preview.files) {
        if (conflicts.has(file.path) && !input.includeConflicts) {
          skipped.push(file.path);
          continue;
        }
        await restoreFile(repo, { root: session.rootPath }, target, file.path);
        changed.push(file.path);
      }
      return { changed, skipped };
    }, {});
    const done = preview!;
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

  /** Waits for the turn records under way, then closes the work-tree watchers. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.chains.values()]);
    this.watchers?.close();
  }

  /**
   * Runs a take-back between two snapshots (the work tree before it, after it) under the
   * repository's writer lock, and stores it as a step of the session.
   */
  private async recordTakeBack(
    session: SnapshotSession,
    actorId: string,
    kind: "revert" | "rewind",
    promptSeq: number | null,
    write: (current: string) => Promise<{ changed: string[]; skipped: string[] }>,
    event: Record<string, unknown>,
  ): Promise<{ event: Record<string, unknown>; result: TakeBackResult }> {
    const repo = this.repoOf(session);
    const before = await repo.snapshot(`before a ${kind} in session ${session.sessionId}`);
    const result = await write(before);
    const after = await repo.snapshot(`after a ${kind} in session ${session.sessionId}`);
    const files = before === after ? [] : await repo.diff(before, after);
    await insertTurnChange(this.deps.db, {
      sessionId: session.sessionId,
      kind,
      promptSeq,
      beforeCommit: before,
      afterCommit: after,
      status: "ok",
      files,
      createdById: actorId,
    });
    const action = kind === "rewind" ? "session.rewind" : event.what === "hunk" ? "session.revert-hunk" : "session.revert-file";
    await this.deps.db.auditLog.create({
      data: {
        actorId,
        action,
        objectType: "session",
        objectId: session.sessionId,
        workspaceId: session.workspaceId,
        details: JSON.stringify({ ...event, ...(promptSeq !== null ? { promptSeq } : {}), changed: result.changed, skipped: result.skipped }),
      },
    });
    return { event: { ...event, files, changed: result.changed, skipped: result.skipped }, result };
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

  private repoOf(session: SnapshotSession): ShadowRepo {
    return shadowRepoOf(this.deps.dataDir, session.repoKey ?? session.workspaceId, session.rootPath, { watchers: this.watchers });
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
