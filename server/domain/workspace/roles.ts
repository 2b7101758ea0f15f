/**
 * Who may do what in a workspace. Pure rules: the route handlers and the sidecar ask these
 * functions, never compare role strings themselves.
 */
export const Role = { owner: "owner", editor: "editor", viewer: "viewer" } as const;
export type Role = (typeof Role)[keyof typeof Role];

export const roles: readonly Role[] = [Role.owner, Role.editor, Role.viewer];

export const WorkspaceAction = {
  read: "read",
  /** prompt, interrupt, stop, switch mode or model, approve or deny */
  steer: "steer",
  manageMembers: "manageMembers",
  manageSettings: "manageSettings",
} as const;
export type WorkspaceAction = (typeof WorkspaceAction)[keyof typeof WorkspaceAction];

const allowed: Record<Role, ReadonlySet<WorkspaceAction>> = {
  owner: new Set(["read", "steer", "manageMembers", "manageSettings"]),
  editor: new Set(["read", "steer"]),
  viewer: new Set(["read"]),
};

/** True when a member with `role` may perform `action`. */
export function canPerform(role: Role, action: WorkspaceAction): boolean {
  return allowed[role].has(action);
}

/** Narrows an arbitrary string (from the database) to a role, or undefined. */
export function parseRole(value: string): Role | undefined {
  return (roles as readonly string[]).includes(value) ? (value as Role) : undefined;
}

export interface MemberChange {
  /** the member whose role changes or who is removed */
  targetUserId: string;
  /** the new role, or null for removal */
  newRole: Role | null;
}

/**
 * Checks a membership change against the rule that a workspace always keeps an owner.
 * Returns a reason when the change must be refused.
 */
export function refuseMemberChange(
  members: readonly { userId: string; role: Role }[],
  change: MemberChange,
): string | undefined {
  const target = members.find((m) => m.userId === change.targetUserId);
  if (!target) return "That person is not a member of this workspace.";
  const owners = members.filter((m) => m.role === Role.owner).length;
  const losesOwner = target.role === Role.owner && change.newRole !== Role.owner;
  if (losesOwner && owners <= 1) {
    return "A workspace needs at least one owner: make someone else owner first.";
  }
  return undefined;
}
