/**
 * A CLI config directory's files, for the sidecar before every spawn: the config guard's
 * `.claude.json` (read, then rewritten without the grants a session gave itself, or with an
 * owner's trust) and whether a conversation's transcript is there to resume; and for the
 * approval card, the plan file an ExitPlanMode request names (`plans/<name>.md`).
 *
 * The directory is writable from inside a session's sandbox, so whatever sits in it is the
 * session's choice: nothing here follows a symbolic link at a name it opens, a FIFO or a device
 * is never read, and a write goes to a fresh file under a random name (created exclusively,
 * never through a link) that is then renamed over `.claude.json` (which replaces a link, never
 * its target). The door's sandbox holds this directory only, so even a link that were followed
 * would lead nowhere else.
 */
import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { lstat, open, readdir, rename, unlink } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import { defineOp, type DoorContext } from "./define";

/** The CLI's own config file in its config directory. */
export const cliConfigFileName = ".claude.json";

/** Larger `.claude.json` files are not read (reported as `too_large`). */
export const maxCliConfigBytes = 4 * 1024 * 1024;

/** What `.claude.json` is now: its text, nothing, or something that is not a regular file to read. */
export type CliConfigRead =
  | { kind: "file"; text: string }
  | { kind: "absent" }
  | { kind: "other"; type: "symlink" | "directory" | "special" | "too_large" | "unreadable" };

function configDirOf(ctx: DoorContext): string {
  if (!ctx.configDir) throw new Error("this door holds no CLI config directory");
  return ctx.configDir;
}

async function readCliConfig(dir: string): Promise<CliConfigRead> {
  return readRegularFile(path.join(dir, cliConfigFileName), maxCliConfigBytes);
}

/** A regular file's text, never through a link at its name, never a FIFO or device, at most `maxBytes`. */
async function readRegularFile(file: string, maxBytes: number): Promise<CliConfigRead> {
  let handle;
  try {
    // O_NOFOLLOW: a link at the name fails (ELOOP) instead of being followed; O_NONBLOCK: a FIFO opens without waiting.
    handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return { kind: "absent" };
    if (code === "ELOOP") return { kind: "other", type: "symlink" };
    // ENXIO: a socket; anything else (EACCES…) is unreadable
    return { kind: "other", type: code === "ENXIO" ? "special" : "unreadable" };
  }
  try {
    const stats = await handle.stat();
    if (stats.isDirectory()) return { kind: "other", type: "directory" };
    if (!stats.isFile()) return { kind: "other", type: "special" };
    if (stats.size > maxBytes) return { kind: "other", type: "too_large" };
    // Read at most one byte past the cap: a file that grows meanwhile is still bounded.
    const buffer = Buffer.alloc(maxBytes + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > maxBytes) return { kind: "other", type: "too_large" };
    }
    return { kind: "file", text: buffer.subarray(0, length).toString("utf8") };
  } finally {
    await handle.close();
  }
}

/** Writes `.claude.json` (mode 0600) through a fresh file renamed over it. */
async function writeCliConfig(dir: string, text: string): Promise<void> {
  const target = path.join(dir, cliConfigFileName);
  const temp = path.join(dir, `${cliConfigFileName}.conduit-${randomBytes(16).toString("hex")}`);
  // O_EXCL with O_CREAT: fails on anything already at the name, a link included (never followed).
  const handle = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  try {
    try {
      await handle.writeFile(text, "utf8");
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, target);
  } catch (err) {
    await unlink(temp).catch(() => undefined);
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EISDIR" || code === "ENOTEMPTY" || code === "EEXIST") {
      throw new AppError(ErrorCode.conflict, `The CLI config directory's ${cliConfigFileName} is a directory; it cannot be rewritten.`);
    }
    throw err;
  }
}

/** Where the CLI keeps plan-mode plans in its config directory (`plans/<slug>.md`). */
export const cliPlansDirName = "plans";

/** Larger plan files are not read (reported as `too_large`). */
export const maxPlanBytes = 512 * 1024;

/** A plan file's name as the CLI makes them (`dreamy-wiggling-marble.md`): no separator, no leading dot. */
export const planFileNamePattern = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}\.md$/;

/**
 * `<configDir>/plans/<name>` (ExitPlanMode's plan file): neither the folder nor the file through a
 * link, a regular file only, at most {@link maxPlanBytes}.
 */
async function readPlanFile(dir: string, name: string): Promise<CliConfigRead> {
  const plans = path.join(dir, cliPlansDirName);
  const info = await lstat(plans).catch(() => undefined);
  if (!info) return { kind: "absent" };
  if (info.isSymbolicLink()) return { kind: "other", type: "symlink" };
  if (!info.isDirectory()) return { kind: "other", type: "special" };
  return readRegularFile(path.join(plans, name), maxPlanBytes);
}

/** True when `<configDir>/projects/<project>/<claudeSessionId>.jsonl` is a regular file (no link followed). */
async function transcriptExists(dir: string, claudeSessionId: string): Promise<boolean> {
  const projects = path.join(dir, "projects");
  const info = await lstat(projects).catch(() => undefined);
  if (!info?.isDirectory()) return false;
  const entries = await readdir(projects, { withFileTypes: true }).catch(() => []);
  const file = `${claudeSessionId}.jsonl`;
  for (const entry of entries) {
    if (!entry.isDirectory()) continue;
    const found = await lstat(path.join(projects, entry.name, file)).catch(() => undefined);
    if (found?.isFile()) return true;
  }
  return false;
}

export const configOps = {
  /** `.claude.json` as it is: never through a link, never a FIFO or device, at most {@link maxCliConfigBytes}. */
  "config.readClaudeJson": defineOp("files", z.object({}), (_i, ctx): Promise<CliConfigRead> => readCliConfig(configDirOf(ctx))),
  /** Replaces `.claude.json` (a link there is replaced, not followed). */
  "config.writeClaudeJson": defineOp("files", z.object({ text: z.string().max(3 * maxCliConfigBytes) }), (i, ctx) => writeCliConfig(configDirOf(ctx), i.text)),
  /** A plan file the CLI wrote in plan mode (`plans/<name>`): never through a link, a regular file only, size-capped. */
  "config.readPlan": defineOp("files", z.object({ name: z.string().regex(planFileNamePattern) }), (i, ctx) =>
    readPlanFile(configDirOf(ctx), i.name),
  ),
  /** Whether the CLI kept a transcript of this conversation (a resume finds it). */
  "config.transcriptExists": defineOp("files", z.object({ claudeSessionId: z.string().regex(/^[A-Za-z0-9_-]{1,128}$/) }), (i, ctx) =>
    transcriptExists(configDirOf(ctx), i.claudeSessionId),
  ),
};
