"use client";

import { useCallback, useEffect, useRef, useState, useSyncExternalStore } from "react";
import { ConnectionNotice, useSocket } from "@/components/session/use-socket";
import { ApprovalCard, type ApprovalCardHandle } from "./approval-card";
import { approvalKeyAction } from "./approval-keys";
import { preloadReviewEditor } from "./preload-review-editor";
import { decideApproval, useApprovals } from "./use-approvals";

/**
 * The caller's approvals across every session and workspace, live. Keyboard: j / k move
 * between cards, a allows and d denies the current one, Shift+D goes to its message box.
 */
export function ApprovalInbox() {
  const { approvals, loaded, problem } = useApprovals();
  const socketState = useSocket();
  const [selectedId, setSelectedId] = useState<string>();
  const handles = useRef(new Map<string, ApprovalCardHandle>());
  const pendingList = approvals.filter((a) => a.status === "pending");
  const decidedList = approvals.filter((a) => a.status !== "pending");
  const selected = approvals.some((a) => a.id === selectedId) ? selectedId : approvals[0]?.id;
  // Diffs are what the inbox shows most: fetch the editor while the page idles.
  useEffect(() => preloadReviewEditor(), []);

  const move = useCallback(
    (step: number) => {
      if (approvals.length === 0) return;
      const index = Math.max(
        0,
        approvals.findIndex((a) => a.id === selected),
      );
      const next = approvals[Math.min(approvals.length - 1, Math.max(0, index + step))]!;
      setSelectedId(next.id);
      handles.current.get(next.id)?.focus();
    },
    [approvals, selected],
  );

  // After a decision by key, the next waiting card becomes current (the decided one moves down).
  const advanceFrom = useCallback(
    (id: string) => {
      const waiting = approvals.filter((a) => a.status === "pending");
      const index = waiting.findIndex((a) => a.id === id);
      const next = waiting[index + 1] ?? waiting[index - 1];
      if (!next) return;
      setSelectedId(next.id);
      handles.current.get(next.id)?.focus();
    },
    [approvals],
  );

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const action = approvalKeyAction(e);
      if (!action) return;
      const current = selected ? handles.current.get(selected) : undefined;
      const isPending = approvals.some((a) => a.id === selected && a.status === "pending");
      switch (action) {
        case "next":
        case "previous":
          e.preventDefault();
          move(action === "next" ? 1 : -1);
          break;
        case "allow":
        case "deny":
          if (!current || !isPending) return;
          e.preventDefault();
          if (action === "allow") current.allow();
          else current.deny();
          advanceFrom(selected!);
          break;
        case "message":
          if (!current || !isPending) return;
          // Prevented, or the D would be typed into the box it focuses.
          e.preventDefault();
          current.focusMessage();
          break;
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [approvals, selected, move, advanceFrom]);

  const card = (a: (typeof approvals)[number]) => (
    <ApprovalCard
      key={a.id}
      approval={a}
      selected={a.id === selected}
      shortcuts={a.id === selected}
      onActivate={() => setSelectedId(a.id)}
      onDecide={(decision) => decideApproval(a.id, decision)}
      ref={(h) => {
        if (h) handles.current.set(a.id, h);
        else handles.current.delete(a.id);
      }}
    />
  );

  return (
    <div data-testid="approval-inbox" data-loaded={loaded} className="space-y-4">
      <div className="flex flex-wrap items-center gap-x-3 gap-y-2">
        <h1 className="text-xl font-semibold">Approvals</h1>
        <ConnectionNotice state={socketState} />
        <div className="ml-auto flex items-center gap-3 text-xs text-zinc-500">
          <span className="hidden sm:inline">
            <Key>j</Key>/<Key>k</Key> move · <Key>a</Key> allow · <Key>d</Key> deny · <Key>⇧D</Key> message
          </span>
          <NotificationToggle />
        </div>
      </div>
      {problem && (
        <p
          role="status"
          className="rounded-md bg-red-50 px-3 py-2 text-sm text-red-800 dark:bg-red-950/60 dark:text-red-300"
        >
          Could not load your approvals: {problem}
        </p>
      )}
      {!loaded && !problem ? (
        <p className="text-sm text-zinc-500">Loading approvals…</p>
      ) : (
        <>
          <section aria-labelledby="inbox-pending" className="space-y-3">
            <h2 id="inbox-pending" className="text-xs font-medium tracking-wide text-zinc-500 uppercase">
              Waiting for you · <span data-testid="approval-inbox-pending">{pendingList.length}</span>
            </h2>
            {pendingList.length === 0 ? (
              <p
                data-testid="approval-inbox-empty"
                className="rounded-lg border border-dashed border-zinc-300 px-4 py-6 text-center text-sm text-zinc-500 dark:border-zinc-700"
              >
                Nothing waits for you. When Claude Code asks to use a tool in one of your sessions, the request shows up
                here.
              </p>
            ) : (
              pendingList.map(card)
            )}
          </section>
          {decidedList.length > 0 && (
            <section aria-labelledby="inbox-decided" className="space-y-2">
              <h2 id="inbox-decided" className="text-xs font-medium tracking-wide text-zinc-500 uppercase">
                Decided recently
              </h2>
              {decidedList.map(card)}
            </section>
          )}
        </>
      )}
    </div>
  );
}

function Key({ children }: { children: string }) {
  return (
    <kbd className="rounded border border-zinc-300 bg-white px-1 font-mono text-[10px] text-zinc-600 dark:border-zinc-700 dark:bg-zinc-900 dark:text-zinc-300">
      {children}
    </kbd>
  );
}

type PermissionState = NotificationPermission | "unsupported";

const permissionListeners = new Set<() => void>();

function readPermission(): PermissionState {
  return typeof Notification === "undefined" ? "unsupported" : Notification.permission;
}

function subscribePermission(listener: () => void): () => void {
  permissionListeners.add(listener);
  return () => permissionListeners.delete(listener);
}

/** Asks for desktop notifications only when clicked, never on load. */
function NotificationToggle() {
  const permission = useSyncExternalStore(subscribePermission, readPermission, () => "unsupported" as const);
  if (permission === "unsupported") return null;
  if (permission === "granted") return <span data-testid="notifications-on">Desktop notifications on</span>;
  if (permission === "denied")
    return <span title="Allow notifications for this site in the browser settings">Notifications blocked</span>;
  return (
    <button
      type="button"
      data-testid="notifications-enable"
      className="rounded-md border border-zinc-300 px-2 py-1 text-xs font-medium text-zinc-700 hover:bg-zinc-100 focus-visible:outline-2 focus-visible:outline-indigo-500 dark:border-zinc-700 dark:text-zinc-300 dark:hover:bg-zinc-800"
      onClick={() => {
        void Notification.requestPermission().then(() => {
          for (const listener of permissionListeners) listener();
        });
      }}
    >
      Notify me when the tab is hidden
    </button>
  );
}
