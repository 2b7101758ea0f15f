"use client";

import { memo, useEffect, useRef, useState } from "react";
import { ApprovalCard, type ApprovalCardHandle } from "./approval-card";
import { approvalKeyAction } from "./approval-keys";
import { preloadReviewEditor } from "./preload-review-editor";
import { decideApproval, useApprovals } from "./use-approvals";

/**
 * The caller's pending approvals for one session, as cards to mount inline in the conversation.
 * Only people who may decide get approvals routed to them, so viewers see nothing here.
 *
 * The inbox's keys work here too (a allows, d denies, Shift+D goes to the message box, j / k
 * move), on the card last focused or clicked, else the first one waiting; never while the person
 * types in the prompt box, a message box or Monaco.
 *
 * Memoized: it reads the inbox store itself, so the session page's renders (one per event) pass it by.
 */
export const SessionApprovals = memo(function SessionApprovals({ sessionId }: { sessionId: string }) {
  const { approvals } = useApprovals();
  const pending = approvals.filter((a) => a.sessionId === sessionId && a.status === "pending");
  const [chosenId, setChosenId] = useState<string>();
  const handles = useRef(new Map<string, ApprovalCardHandle>());
  const currentId = pending.some((a) => a.id === chosenId) ? chosenId : pending[0]?.id;
  // The listener reads the latest cards through a ref, so it is added once, not on every fact.
  const latest = useRef({ ids: pending.map((a) => a.id), currentId });
  useEffect(() => {
    latest.current = { ids: pending.map((a) => a.id), currentId };
  });

  // The first diff of the page should not wait for the editor: fetch it while the page idles.
  useEffect(() => preloadReviewEditor(), []);

  const hasPending = pending.length > 0;
  useEffect(() => {
    if (!hasPending) return;
    const onKey = (e: KeyboardEvent) => {
      const action = approvalKeyAction(e);
      const { ids, currentId: id } = latest.current;
      const current = id ? handles.current.get(id) : undefined;
      if (!action || !id || !current) return;
      // Prevented, or a second listener (or the box Shift+D focuses) would see the key too.
      e.preventDefault();
      if (action === "allow") current.allow();
      else if (action === "deny") current.deny();
      else if (action === "message") current.focusMessage();
      else {
        const index = ids.indexOf(id);
        const next = ids[Math.min(ids.length - 1, Math.max(0, index + (action === "next" ? 1 : -1)))]!;
        setChosenId(next);
        handles.current.get(next)?.focus();
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [hasPending]);

  if (!hasPending) return null;
  return (
    <div data-testid="session-approvals" className="space-y-3">
      {pending.map((a) => (
        <ApprovalCard
          key={a.id}
          approval={a}
          showContext={false}
          selected={pending.length > 1 && a.id === currentId}
          shortcuts={a.id === currentId}
          onActivate={() => setChosenId(a.id)}
          onDecide={(decision) => decideApproval(a.id, decision)}
          ref={(h) => {
            if (h) handles.current.set(a.id, h);
            else handles.current.delete(a.id);
          }}
        />
      ))}
    </div>
  );
});
