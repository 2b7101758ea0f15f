/**
 * How a door operation is declared: its input schema (checked inside the door, the boundary)
 * and what it runs there. `purpose` says which kind of door may run it:
 * - `files`: Conduit's own code only (reads, writes, the shadow repository's git with Conduit's
 *   config). No program a workspace configures ever runs in a files door.
 * - `git`: the workspace's own repository, whose `.git/config` and `.gitattributes` may name
 *   drivers. They run there, inside the sandbox, and reach nothing but that workspace; a door
 *   whose drivers might have run answers only git requests.
 */
import type { z } from "zod";
import type { WorkspaceRoot } from "@/server/workspace-fs/workspace-path";

export type DoorPurpose = "files" | "git";

/** What a door holds: fixed when it starts, from its scope. */
export interface DoorContext {
  purpose: DoorPurpose;
  /** The workspace (real path) and the nested workspaces hidden in it; absent in a config-only door. */
  workspace: WorkspaceRoot | undefined;
  /** The workspace's shadow repositories' folder (files doors). */
  shadowDir: string | undefined;
  /** A CLI config directory (files doors of the config guard). */
  configDir: string | undefined;
}

export interface DoorOp<I extends z.ZodType, O> {
  purpose: DoorPurpose;
  input: I;
  run(input: z.output<I>, ctx: DoorContext): Promise<O>;
}

export function defineOp<I extends z.ZodType, O>(purpose: DoorPurpose, input: I, run: (input: z.output<I>, ctx: DoorContext) => Promise<O>): DoorOp<I, O> {
  return { purpose, input, run };
}

/** The workspace of a door that must have one. */
export function workspaceOf(ctx: DoorContext): WorkspaceRoot {
  if (!ctx.workspace) throw new Error("this door holds no workspace");
  return ctx.workspace;
}
