"use client";

/**
 * The member's role in a workspace, live (issue 38, defect 6). The page was drawn with a role; it
 * tells the sidecar which (`workspace:watch-role`, on every (re)connect), takes the answer (the
 * role now), and follows `workspace:role` facts the revocation sweep sends within about 2 s of a
 * change. On a change the page re-renders its server parts (`router.refresh()`) and says why.
 */
import { useRouter } from "next/navigation";
import { memo, useEffect, useRef, useState } from "react";
import type { Ack } from "@/server/shared/wire/ack";
import type { RoleChanged, RoleWatchCommand, RoleWatchFact, WatchRoleResult } from "@/server/shared/wire/role-watch";
import { getSocket } from "@/components/session/wire-client";

export type WorkspaceRole = "owner" | "editor" | "viewer";

const watchCommand = "workspace:watch-role" as const satisfies (typeof RoleWatchCommand)["watch"];
const changedFact = "workspace:role" as const satisfies (typeof RoleWatchFact)["changed"];

/** What the new role means for the page, in a sentence after "Your role … changed to X". */
const consequence: Record<WorkspaceRole, string> = {
  viewer: "you can watch sessions, but not prompt them, decide approvals or change their mode.",
  editor: "you can prompt sessions, decide approvals and change their mode.",
  owner: "you can steer sessions and manage the workspace's members and settings.",
};

export function roleChangeMessage(role: WorkspaceRole): string {
  return `Your role in this workspace changed to ${role}: ${consequence[role]}`;
}

export interface LiveRole {
  role: WorkspaceRole;
  /** Set once the role changed while the page was open. */
  notice: string | undefined;
  dismiss: () => void;
}

/** The role to draw `workspaceId`'s page with, starting from the one it was rendered with. */
export function useLiveRole(workspaceId: string, rendered: WorkspaceRole): LiveRole {
  const router = useRouter();
  const [role, setRole] = useState(rendered);
  const [notice, setNotice] = useState<string>();
  const current = useRef(rendered);

  useEffect(() => {
    const socket = getSocket();
    const change = (next: WorkspaceRole) => {
      if (next === current.current) return;
      current.current = next;
      setRole(next);
      setNotice(roleChangeMessage(next));
      // the server-drawn parts (panels, the role shown) follow
      router.refresh();
    };
    const watch = () => {
      socket
        .timeout(10_000)
        .emit(watchCommand, { workspaceId, role: current.current }, (err: unknown, ack: Ack<WatchRoleResult> | undefined) => {
          if (err || !ack?.ok || ack.data.role === null) return;
          change(ack.data.role);
        });
    };
    const onChanged = (fact: RoleChanged) => {
      if (fact?.workspaceId === workspaceId && (fact.role === "owner" || fact.role === "editor" || fact.role === "viewer")) change(fact.role);
    };
    socket.on("connect", watch);
    socket.on(changedFact, onChanged);
    if (socket.connected) watch();
    else if (!socket.active) socket.connect();
    return () => {
      socket.off("connect", watch);
      socket.off(changedFact, onChanged);
    };
  }, [workspaceId, router]);

  return { role, notice, dismiss: () => setNotice(undefined) };
}

/** The sentence saying the role changed, with a Dismiss; nothing until it did. */
export const RoleChangedNotice = memo(function RoleChangedNotice({ notice, onDismiss }: { notice: string | undefined; onDismiss: () => void }) {
  if (!notice) return null;
  return (
    <p
      role="status"
      data-testid="role-changed"
      className="rounded-md bg-indigo-50 px-3 py-2 text-sm text-indigo-900 dark:bg-indigo-950/60 dark:text-indigo-100"
    >
      {notice}{" "}
      <button type="button" className="font-medium underline" onClick={onDismiss}>
        Dismiss
      </button>
    </p>
  );
});

/** For server-drawn pages (the workspace page): follows the role and says when it changed. */
export function LiveRoleNotice({ workspaceId, role }: { workspaceId: string; role: WorkspaceRole }) {
  const live = useLiveRole(workspaceId, role);
  return <RoleChangedNotice notice={live.notice} onDismiss={live.dismiss} />;
}
