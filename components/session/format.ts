/** Small display helpers shared by the session components. */
import { formatCompactCount } from "@/components/format/money";

export { formatUsd } from "@/components/format/money";

/** 950, 12.3K, 4.1M. */
export function formatTokens(n: number): string {
  return formatCompactCount(n);
}

/** "just now", "5 min ago", "3 h ago", else a date. */
export function formatRelative(iso: string, now = Date.now()): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return "";
  const s = Math.max(0, Math.round((now - t) / 1000));
  if (s < 45) return "just now";
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86_400) return `${Math.round(s / 3600)} h ago`;
  return new Date(t).toLocaleDateString("en-US", { month: "short", day: "numeric", year: "numeric" });
}

/** 850 ms, 3.2 s, 2 min 5 s. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const m = Math.floor(ms / 60_000);
  return `${m} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** A session's name in lists and headers: its title, else its first prompt, else its id. */
export function sessionTitle(session: { id: string; title: string | null }, firstPrompt?: string): string {
  const prompt = firstPrompt?.trim().split("\n")[0]?.trim();
  if (session.title?.trim()) return session.title.trim();
  if (prompt) return prompt.length > 72 ? `${prompt.slice(0, 71)}…` : prompt;
  return `Session ${session.id.slice(-6)}`;
}

/** A path inside the workspace, shown relative to its root. */
export function relativePath(path: string, root: string | undefined): string {
  if (!root) return path;
  const prefix = root.endsWith("/") ? root : `${root}/`;
  return path.startsWith(prefix) ? path.slice(prefix.length) : path;
}
