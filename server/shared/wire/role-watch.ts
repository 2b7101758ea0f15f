/**
 * A member's role reaching the pages they have open (issue 38, defect 6). A page of a workspace
 * tells the sidecar which role it was drawn with (`workspace:watch-role`); the answer is the role
 * now, and the revocation sweep (server/sidecar/socket/revocation-sweep.ts), which reads every
 * connected user's memberships about every second, sends `workspace:role` when it changes. The
 * page then enables or disables what the role allows and says why. A removed member's socket is
 * closed by the same sweep instead.
 */
import { z } from "zod";

/** A workspace role (server/domain/workspace/roles.ts's, repeated: the wire imports only server/shared). */
export type Role = "owner" | "editor" | "viewer";

export const RoleWatchCommand = {
  /** Payload {@link WatchRole}; the ack's data is {@link WatchRoleResult}. */
  watch: "workspace:watch-role",
} as const;

export const RoleWatchFact = {
  /** Payload {@link RoleChanged}, to the sockets of the member whose role changed. */
  changed: "workspace:role",
} as const;

export const ZWatchRole = z.object({
  workspaceId: z.string().min(1).max(64),
  role: z.enum(["owner", "editor", "viewer"]),
});
export type WatchRole = z.infer<typeof ZWatchRole>;

/** The caller's role in the workspace now; null when they are not a member. */
export interface WatchRoleResult {
  role: Role | null;
}

export interface RoleChanged {
  workspaceId: string;
  role: Role;
  previous: Role;
}
