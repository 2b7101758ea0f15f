/**
 * What one door holds, fixed at its start: its purpose and the directories bound into its
 * sandbox (read-write, at their real paths). Doors are keyed by their scope: two requests with
 * the same scope go to the same process.
 */
import { z } from "zod";

const absolute = z
  .string()
  .min(2)
  .max(4096)
  .refine((p) => p.startsWith("/") && !p.includes("\0") && !p.split("/").includes(".."), "an absolute path without ..");

export const ZDoorScope = z.object({
  purpose: z.enum(["files", "git"]),
  /** The workspace (real path), with the real paths of workspaces nested in it (hidden). */
  workspace: z.object({ root: absolute, excluded: z.array(absolute).max(1000) }).optional(),
  /** `DATA_DIR/shadow/<workspaceId>`: the workspace's shadow repositories (files doors only). */
  shadowDir: absolute.optional(),
  /** A CLI config directory (the config guard's files door). */
  configDir: absolute.optional(),
});
export type DoorScope = z.infer<typeof ZDoorScope>;

/** The pool's key of a scope (its fields in a fixed order). */
export function scopeKey(scope: DoorScope): string {
  return JSON.stringify([scope.purpose, scope.workspace?.root ?? null, [...(scope.workspace?.excluded ?? [])].sort(), scope.shadowDir ?? null, scope.configDir ?? null]);
}
