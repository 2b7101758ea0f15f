/**
 * The conversation's lines for the Changes events: a turn's file changes (`changes`), a revert
 * and a rewind by a person. Pure, shared by the live conversation and the history transcript.
 */

interface FileLike {
  path?: unknown;
  status?: unknown;
  insertions?: unknown;
  deletions?: unknown;
}

export interface ChangeNotice {
  tone: "info" | "warning";
  text: string;
  detail?: string;
}

function filesOf(value: unknown): FileLike[] {
  return Array.isArray(value) ? (value.filter((f) => typeof f === "object" && f !== null) as FileLike[]) : [];
}

function count(n: unknown): number {
  return typeof n === "number" && Number.isFinite(n) ? n : 0;
}

function listing(files: FileLike[]): string | undefined {
  if (files.length === 0) return undefined;
  return files.map((f) => `${String(f.status ?? "?").padEnd(8)} ${String(f.path ?? "?")}  +${count(f.insertions)} −${count(f.deletions)}`).join("\n");
}

function totals(files: FileLike[]): string {
  const ins = files.reduce((n, f) => n + count(f.insertions), 0);
  const del = files.reduce((n, f) => n + count(f.deletions), 0);
  return `${files.length} file${files.length === 1 ? "" : "s"} (+${ins} −${del})`;
}

/** How a prompt is named to people: by its words (a log's event number means nothing to them). */
export function promptName(text: string | undefined, max = 60): string | undefined {
  const words = text?.replace(/\s+/g, " ").trim();
  if (!words) return undefined;
  return `“${words.length > max ? `${words.slice(0, max - 1)}…` : words}”`;
}

/**
 * The notice for a `changes`, `revert` or `rewind` event, or undefined when there is nothing to
 * say. `promptText` finds the text of the prompt a rewind went back before.
 */
export function describeChangeEvent(
  kind: string,
  payload: Record<string, unknown> | undefined,
  by: string,
  promptText?: (seq: number) => string | undefined,
): ChangeNotice | undefined {
  const files = filesOf(payload?.files);
  if (kind === "changes") {
    if (payload?.status === "unknown") return { tone: "warning", text: "This turn's file changes are unknown (a snapshot of the workspace failed)." };
    if (files.length === 0) return undefined;
    return { tone: "info", text: `This turn changed ${totals(files)}. See the Changes tab.`, detail: listing(files) };
  }
  if (kind === "revert") {
    const path = typeof payload?.path === "string" ? payload.path : "a file";
    const what = payload?.what === "hunk" ? `a hunk of ${path}` : path;
    return { tone: "info", text: `${by} reverted ${what}.`, detail: listing(files) };
  }
  if (kind === "rewind") {
    const skipped = Array.isArray(payload?.skipped) ? (payload.skipped as unknown[]).map(String) : [];
    const named = typeof payload?.promptSeq === "number" ? promptName(promptText?.(payload.promptSeq)) : undefined;
    return {
      tone: "info",
      text: `${by} rewound the workspace's files to before ${named ? `the prompt ${named}` : "a prompt"}: ${totals(files)}.${skipped.length > 0 ? ` Left alone (changed since): ${skipped.join(", ")}.` : ""}`,
      detail: listing(files),
    };
  }
  return undefined;
}
