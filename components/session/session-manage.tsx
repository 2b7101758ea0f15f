"use client";

import { useRouter } from "next/navigation";
import { memo, useEffect, useId, useRef, useState, type FormEvent } from "react";
import type { Ack } from "@/server/shared/wire/ack";
import type { ArchiveResult, RenameResult, SessionRemoved } from "@/server/shared/wire/session-manage";

/** `maxTitleChars` of server/shared/wire/session-manage (kept out of the client bundle with zod). */
const maxTitleChars = 200;
import { ackMessage, type CommandName } from "./wire-client";

type Send = <T>(name: CommandName, payload: Record<string, unknown>) => Promise<Ack<T>>;

const errorTip =
  "absolute top-full right-0 z-20 mt-1 w-64 rounded-md bg-red-50 px-2 py-1 text-xs text-red-800 shadow dark:bg-red-950 dark:text-red-300";

/**
 * The session page's management actions: rename, end the CLI process (distinct from Stop, which
 * stops a turn: the process ends, the next prompt resumes the conversation), archive or
 * unarchive, and for owners delete (asked in a dialog, typed to confirm).
 */
export const SessionManage = memo(function SessionManage(props: {
  sessionId: string;
  slug: string;
  title: string;
  role: "owner" | "editor" | "viewer";
  processLive: boolean;
  initiallyArchived: boolean;
  send: Send;
  /** A `session:removed` fact for this session (archived elsewhere, or deleted). */
  removed?: (SessionRemoved & { archived?: boolean }) | undefined;
}) {
  const { sessionId, slug, title, role, processLive, initiallyArchived, send, removed } = props;
  const canWrite = role !== "viewer";
  const [archived, setArchived] = useState(initiallyArchived);
  useEffect(() => {
    if (removed?.archived !== undefined) setArchived(removed.archived);
  }, [removed]);
  return (
    <div className="flex flex-wrap items-center gap-2">
      <RenameControl title={title} canWrite={canWrite} send={send} />
      <ActionButton
        testId="session-stop-process"
        label="End process"
        busyLabel="Ending…"
        disabledReason={
          !canWrite ? "Viewers cannot end the session's process." : !processLive ? "The CLI process is not running." : undefined
        }
        title="End the CLI process, not just the turn (the conversation is kept; the next prompt resumes it)"
        run={async () => ackMessage(await send("session:stop", {}))}
      />
      <ActionButton
        testId="session-archive"
        label={archived ? "Unarchive" : "Archive"}
        busyLabel={archived ? "Unarchiving…" : "Archiving…"}
        dataState={archived ? "archived" : "active"}
        disabledReason={!canWrite ? "Viewers cannot archive sessions." : undefined}
        title={archived ? "Bring the session back into the list" : "Leave the session out of the default list"}
        run={async () => {
          const ack = await send<ArchiveResult>("session:archive", { archived: !archived });
          if (ack.ok) setArchived(ack.data.archived);
          return ackMessage(ack);
        }}
      />
      {role === "owner" && <DeleteControl sessionId={sessionId} slug={slug} title={title} send={send} />}
    </div>
  );
});

function ActionButton(props: {
  testId: string;
  label: string;
  busyLabel: string;
  title: string;
  disabledReason?: string;
  dataState?: string;
  run: () => Promise<string | undefined>;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const errorId = useId();
  return (
    <div className="relative">
      <button
        type="button"
        data-testid={props.testId}
        data-state={props.dataState}
        className="btn-quiet py-1 text-xs"
        disabled={props.disabledReason !== undefined || busy}
        title={props.disabledReason ?? props.title}
        aria-describedby={error ? errorId : undefined}
        onClick={async () => {
          setBusy(true);
          setError(undefined);
          const failure = await props.run().catch(() => "The request failed. Try again.");
          setBusy(false);
          if (failure) setError(failure);
        }}
      >
        {busy ? props.busyLabel : props.label}
      </button>
      {error && (
        <span id={errorId} role="alert" data-testid={`${props.testId}-error`} className={errorTip}>
          {error}
        </span>
      )}
    </div>
  );
}

function RenameControl({ title, canWrite, send }: { title: string; canWrite: boolean; send: Send }) {
  const [editing, setEditing] = useState(false);
  const [value, setValue] = useState(title);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const input = useRef<HTMLInputElement>(null);
  const opener = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (editing) input.current?.select();
  }, [editing]);

  const close = () => {
    setEditing(false);
    setError(undefined);
    opener.current?.focus();
  };
  async function onSubmit(e: FormEvent) {
    e.preventDefault();
    const next = value.trim();
    if (!next) {
      setError("A title cannot be empty.");
      return;
    }
    if (next === title) return close();
    setBusy(true);
    setError(undefined);
    const ack = await send<RenameResult>("session:rename", { title: next });
    setBusy(false);
    if (!ack.ok) setError(ackMessage(ack));
    else close();
  }

  if (!editing)
    return (
      <button
        ref={opener}
        type="button"
        data-testid="session-rename"
        className="btn-quiet py-1 text-xs"
        disabled={!canWrite}
        title={canWrite ? "Rename the session" : "Viewers cannot rename sessions."}
        onClick={() => {
          setValue(title);
          setEditing(true);
        }}
      >
        Rename
      </button>
    );
  return (
    <form
      onSubmit={onSubmit}
      onKeyDown={(e) => e.key === "Escape" && close()}
      aria-label="Rename the session"
      className="relative flex items-center gap-1"
    >
      <input
        ref={input}
        data-testid="session-rename-input"
        aria-label="Session title"
        value={value}
        maxLength={maxTitleChars}
        onChange={(e) => setValue(e.target.value)}
        className="field w-56 py-1 text-xs"
      />
      <button type="submit" data-testid="session-rename-save" className="btn py-1 text-xs" disabled={busy}>
        {busy ? "Saving…" : "Save"}
      </button>
      <button type="button" className="btn-quiet py-1 text-xs" onClick={close} disabled={busy}>
        Cancel
      </button>
      {error && (
        <span role="alert" data-testid="session-rename-error" className={errorTip}>
          {error}
        </span>
      )}
    </form>
  );
}

const confirmWord = "delete";

function DeleteControl({
  sessionId,
  slug,
  title,
  send,
}: {
  sessionId: string;
  slug: string;
  title: string;
  send: Send;
}) {
  const router = useRouter();
  const dialog = useRef<HTMLDialogElement>(null);
  const [typed, setTyped] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const headingId = useId();
  return (
    <>
      <button
        type="button"
        data-testid="session-delete"
        className="btn-quiet py-1 text-xs text-red-700 dark:text-red-400"
        onClick={() => {
          setTyped("");
          setError(undefined);
          dialog.current?.showModal();
        }}
      >
        Delete
      </button>
      <dialog
        ref={dialog}
        data-testid="session-delete-dialog"
        aria-labelledby={headingId}
        className="m-auto w-[min(28rem,calc(100vw-2rem))] rounded-lg border border-zinc-200 bg-white p-4 text-sm shadow-xl backdrop:bg-black/40 dark:border-zinc-800 dark:bg-zinc-900 dark:text-zinc-100"
      >
        <form
          method="dialog"
          className="space-y-3"
          onSubmit={async (e) => {
            e.preventDefault();
            if (typed.trim().toLowerCase() !== confirmWord || busy) return;
            setBusy(true);
            setError(undefined);
            const ack = await send<SessionRemoved>("session:delete", { confirm: sessionId });
            setBusy(false);
            if (!ack.ok) {
              setError(ackMessage(ack));
              return;
            }
            dialog.current?.close();
            router.push(`/w/${encodeURIComponent(slug)}`);
          }}
        >
          <h2 id={headingId} className="text-base font-semibold">
            Delete “{title}”?
          </h2>
          <p className="text-zinc-600 dark:text-zinc-400">
            Its CLI process is stopped and its conversation, events and approvals are removed for everyone. This cannot
            be undone. Its cost stays in the workspace&apos;s reports.
          </p>
          <label className="block space-y-1">
            <span className="block text-xs text-zinc-500">
              Type <span className="font-mono font-semibold">{confirmWord}</span> to confirm
            </span>
            <input
              data-testid="session-delete-input"
              value={typed}
              onChange={(e) => setTyped(e.target.value)}
              autoComplete="off"
              className="field w-full py-1.5"
            />
          </label>
          {error && (
            <p role="alert" data-testid="session-delete-error" className="text-red-700 dark:text-red-300">
              {error}
            </p>
          )}
          <div className="flex justify-end gap-2">
            <button type="button" className="btn-quiet py-1.5" onClick={() => dialog.current?.close()} disabled={busy}>
              Cancel
            </button>
            <button
              type="submit"
              data-testid="session-delete-confirm"
              className="btn bg-red-600 py-1.5 hover:bg-red-700"
              disabled={typed.trim().toLowerCase() !== confirmWord || busy}
            >
              {busy ? "Deleting…" : "Delete the session"}
            </button>
          </div>
        </form>
      </dialog>
    </>
  );
}
