/**
 * What the workspace-door spec (issue 36) needs besides sessions: canary files outside every
 * workspace, their fingerprints (to prove nothing outside changed), marker directories a hostile
 * program would leave, and an HTTP/socket caller that reads every answer for canary bytes and
 * counts the answers per route group.
 */
import { createHash, randomBytes } from "node:crypto";
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { APIRequestContext } from "@playwright/test";
import type { Socket } from "socket.io-client";
import { emit, type AckResult } from "./clients";

export const token = (label: string) => `${label}${randomBytes(9).toString("hex").toUpperCase()}`;

/** One file or directory outside the workspaces, as it was. */
export interface Fingerprint {
  path: string;
  kind: "file" | "dir" | "link" | "absent";
  sha256?: string;
  mtimeMs?: number;
  size?: number;
  /** For a directory: its entries, sorted. */
  entries?: string[];
}

/** The fingerprint of `file` (no link is followed). */
export function fingerprint(file: string): Fingerprint {
  let st;
  try {
    st = lstatSync(file);
  } catch {
    return { path: file, kind: "absent" };
  }
  if (st.isSymbolicLink()) return { path: file, kind: "link", mtimeMs: st.mtimeMs };
  if (st.isDirectory()) return { path: file, kind: "dir", mtimeMs: st.mtimeMs, entries: readdirSync(file).sort() };
  return { path: file, kind: "file", mtimeMs: st.mtimeMs, size: st.size, sha256: createHash("sha256").update(readFileSync(file)).digest("hex") };
}

/** `dir` and everything below it, fingerprinted. */
export function fingerprintTree(dir: string): Fingerprint[] {
  const out = [fingerprint(dir)];
  const top = out[0]!;
  if (top.kind === "dir") for (const name of top.entries!) out.push(...fingerprintTree(path.join(dir, name)));
  return out;
}

/** What differs between two fingerprint lists (by path), for a message. */
export function changedFingerprints(before: Fingerprint[], after: Fingerprint[]): string[] {
  const was = new Map(before.map((f) => [f.path, f]));
  const now = new Map(after.map((f) => [f.path, f]));
  const changed: string[] = [];
  for (const [p, f] of was) {
    const g = now.get(p) ?? { path: p, kind: "absent" as const };
    if (JSON.stringify(f) !== JSON.stringify(g)) changed.push(`${p}: ${describe(f)} → ${describe(g)}`);
  }
  for (const [p, g] of now) if (!was.has(p)) changed.push(`${p}: new ${describe(g)}`);
  return changed;
}

function describe(f: Fingerprint): string {
  if (f.kind === "file") return `file ${f.size} B sha ${f.sha256!.slice(0, 12)} mtime ${f.mtimeMs}`;
  if (f.kind === "dir") return `dir [${f.entries!.join(",")}] mtime ${f.mtimeMs}`;
  return f.kind;
}

/** Writes `content` at `file` (making its directory) and returns the path. */
export function plant(file: string, content: string): string {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, content);
  return file;
}

/** Every file under the marker directories (a hostile program's marks on the host). */
export function markersIn(dirs: readonly string[]): string[] {
  const found: string[] = [];
  for (const dir of dirs) {
    if (!existsSync(dir)) continue;
    const st = lstatSync(dir);
    if (!st.isDirectory()) {
      found.push(dir);
      continue;
    }
    for (const name of readdirSync(dir)) found.push(path.join(dir, name));
  }
  return found.sort();
}

/** One route group's answers: how many, and which leaked a canary. */
export interface GroupTally {
  requests: number;
  statuses: Record<string, number>;
  leaks: string[];
  /** The first answer of each server-side failure (5xx, `internal`, `unavailable`), redacted. */
  failures: Record<string, string>;
}

/**
 * Calls Conduit as one member and reads every answer for the canaries. `canaries` maps a name
 * (for messages) to bytes that must never come back.
 */
export class AnswerWatch {
  readonly groups = new Map<string, GroupTally>();

  constructor(
    private readonly canaries: () => Record<string, string>,
    /** Masks canaries in a detail line (a report must not carry them either). */
    readonly redact: (text: string) => string,
  ) {}

  /** The canary names found in `text`. */
  leaksIn(text: string): string[] {
    return Object.entries(this.canaries())
      .filter(([, value]) => value.length >= 8 && text.includes(value))
      .map(([name]) => name);
  }

  tally(group: string): GroupTally {
    let t = this.groups.get(group);
    if (!t) this.groups.set(group, (t = { requests: 0, statuses: {}, leaks: [], failures: {} }));
    return t;
  }

  private note(group: string, status: string, text: string, what: string): void {
    const t = this.tally(group);
    t.requests += 1;
    t.statuses[status] = (t.statuses[status] ?? 0) + 1;
    for (const name of this.leaksIn(text)) t.leaks.push(`${name} in ${what} (${status})`);
    if ((/^5\d\d$/.test(status) || status === "internal" || status === "unavailable" || status === "0") && t.failures[status] === undefined) {
      t.failures[status] = this.redact(`${what}: ${text}`).slice(0, 300);
    }
  }

  /** One HTTP request; the answer's text is checked and returned. */
  async http(
    client: APIRequestContext,
    group: string,
    method: "GET" | "POST" | "PUT" | "DELETE",
    url: string,
    data?: unknown,
  ): Promise<{ status: number; text: string; json: () => unknown }> {
    let status = 0;
    let text = "";
    try {
      const res = await client.fetch(url, { method, ...(data === undefined ? {} : { data }), timeout: 60_000 });
      status = res.status();
      text = await res.text();
    } catch (err) {
      text = String(err);
    }
    this.note(group, String(status), text, `${method} ${url.replace(/\?.*/, "")}`);
    return { status, text, json: () => JSON.parse(text) as unknown };
  }

  /** One socket command; its acknowledgement is checked and returned. */
  async socket(socket: Socket, group: string, event: string, payload: unknown): Promise<AckResult> {
    let ack: AckResult;
    try {
      ack = await emit(socket, event, payload);
    } catch (err) {
      ack = { ok: false, error: { code: "no_ack", message: String(err) } };
    }
    this.note(group, ack.ok ? "ok" : ack.error.code, JSON.stringify(ack), event);
    return ack;
  }

  /** Any other answer (an approval card, a tool's output). */
  check(group: string, text: string, what: string): void {
    this.note(group, "seen", text, what);
  }

  /** A group's requests and status counts in a few words, with the first answer of each server-side failure. */
  summary(group: string): string {
    const t = this.tally(group);
    const failures = Object.entries(t.failures).map(([s, text]) => ` [first ${s}: ${text.replace(/\s+/g, " ")}]`);
    return `${t.requests} answers (${Object.entries(t.statuses).map(([s, n]) => `${s}×${n}`).join(" ")})${failures.join("")}`;
  }
}

/** A POSIX shell word. */
export const sh = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`;

/** A Bash command that writes `script` to a file in the sandbox's /tmp and runs it with sh. */
export function runScript(script: string, name = "door"): string {
  const b64 = Buffer.from(script).toString("base64");
  return `echo ${b64} | base64 -d > /tmp/${name}.sh && sh /tmp/${name}.sh; echo ${name}-exit=$?`;
}
