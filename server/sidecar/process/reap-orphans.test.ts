import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { isConduitClaudeCommand, reapOrphans, type ProcessTable } from "./reap-orphans";

const claudeArgv = [
  "/opt/conduit/node_modules/@anthropic-ai/claude-code/bin/claude.exe",
  "--output-format",
  "stream-json",
  "--input-format",
  "stream-json",
  "--verbose",
];

interface FakeProcess {
  argv: string[];
  pgid: number;
  /** Dies on this signal; "never" survives everything. */
  diesOn: "SIGTERM" | "SIGKILL" | "never";
  alive: boolean;
}

function fakeTable(processes: Record<number, FakeProcess>): ProcessTable & { signals: Array<[number, string]> } {
  const signals: Array<[number, string]> = [];
  return {
    signals,
    cmdline: (pid) => (processes[pid]?.alive ? processes[pid].argv : undefined),
    processGroup: (pid) => (processes[pid]?.alive ? processes[pid].pgid : undefined),
    isAlive: (pid) => processes[pid]?.alive === true,
    killGroup(pgid, signal) {
      signals.push([pgid, signal]);
      for (const process of Object.values(processes)) {
        if (process.pgid !== pgid || !process.alive) continue;
        if (process.diesOn === signal || (signal === "SIGKILL" && process.diesOn !== "never")) process.alive = false;
      }
    },
  };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("isConduitClaudeCommand", () => {
  it("recognises the CLI started with stream-json input, and nothing else", () => {
    expect(isConduitClaudeCommand(claudeArgv)).toBe(true);
    expect(isConduitClaudeCommand(["/usr/local/bin/claude", "--input-format", "stream-json"])).toBe(true);
    expect(isConduitClaudeCommand(["/usr/local/bin/claude"])).toBe(false);
    expect(isConduitClaudeCommand(["/usr/bin/node", "server.js", "--input-format", "stream-json"])).toBe(false);
    expect(isConduitClaudeCommand(["/x/cli", "--input-format", "stream-json"], "/x/cli")).toBe(true);
    expect(isConduitClaudeCommand([])).toBe(false);
  });

  it("looks inside a bubblewrap sandbox at the command after --", () => {
    expect(isConduitClaudeCommand(["/usr/bin/bwrap", "--unshare-pid", "--", ...claudeArgv])).toBe(true);
    expect(isConduitClaudeCommand(["/usr/bin/bwrap", "--unshare-pid", "--", "/bin/sh", "--input-format", "stream-json"])).toBe(false);
    expect(isConduitClaudeCommand(["/usr/bin/bwrap", "--input-format", "stream-json"])).toBe(false);
  });
});

describe("reapOrphans", () => {
  it("ends claude groups politely, escalates on the stubborn, and leaves everything else alone", async () => {
    const processes: Record<number, FakeProcess> = {
      100: { argv: claudeArgv, pgid: 100, diesOn: "SIGTERM", alive: true },
      101: { argv: ["bash", "-c", "sleep 100"], pgid: 100, diesOn: "SIGKILL", alive: true }, // a grandchild in its group
      200: { argv: claudeArgv, pgid: 200, diesOn: "SIGKILL", alive: true },
      300: { argv: ["/usr/sbin/nginx"], pgid: 300, diesOn: "SIGTERM", alive: true }, // a recycled pid
      400: { argv: claudeArgv, pgid: 1, diesOn: "SIGTERM", alive: true }, // someone else's claude
      500: { argv: claudeArgv, pgid: 500, diesOn: "never", alive: false }, // already gone
    };
    const table = fakeTable(processes);
    const reaping = reapOrphans([100, 200, 300, 400, 500, 0, 100], { table, termGraceMs: 1000, pollMs: 50 });
    await vi.runAllTimersAsync();
    const report = await reaping;
    expect(report.reaped.sort()).toEqual([100, 200]);
    expect(report.survived).toEqual([]);
    expect(report.skipped).toEqual([
      { pid: 300, reason: "not-claude" },
      { pid: 400, reason: "not-group-leader" },
      { pid: 500, reason: "not-running" },
      { pid: 0, reason: "invalid-pid" },
    ]);
    expect(table.signals).toEqual([
      [100, "SIGTERM"],
      [200, "SIGTERM"],
      [100, "SIGKILL"],
      [200, "SIGKILL"],
    ]);
    expect(processes[101]!.alive).toBe(false);
    expect(processes[300]!.alive).toBe(true);
    expect(processes[400]!.alive).toBe(true);
  });

  it("reports a group that survives SIGKILL", async () => {
    const table = fakeTable({ 100: { argv: claudeArgv, pgid: 100, diesOn: "never", alive: true } });
    const reaping = reapOrphans([100], { table, termGraceMs: 100 });
    await vi.runAllTimersAsync();
    expect(await reaping).toMatchObject({ reaped: [], survived: [100] });
  });

  it("does nothing without pids", async () => {
    expect(await reapOrphans([])).toEqual({ reaped: [], survived: [], skipped: [] });
  });
});
