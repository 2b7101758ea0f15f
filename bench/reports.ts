/**
 * Report and history-search latency on a large SQLite database: 1 M session events and 100 k
 * cost entries (10 k sessions in 10 workspaces by 20 users over a year, 5 k approvals), seeded
 * with raw INSERTs in transactions into a migrated temp database. Each query runs through the
 * Prisma client the app uses; the figure is the median of several runs after a warm-up.
 *
 * Last line: `reports: events=<n> worst_p50_ms=<n> search_p50_ms=<n>` (target ≤ 200 ms each).
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import Database from "better-sqlite3";
import { createDb, type Db } from "../server/db/client";
import { buildReport, type ReportQuery } from "../server/db/cost-reports";
import { deployMigrations } from "../server/db/migrations";
import { listSessionHistory } from "../server/db/session-history";

const EVENTS = 1_000_000;
const COST_ENTRIES = 100_000;
const SESSIONS = 10_000;
const WORKSPACES = 10;
const USERS = 20;
const APPROVALS = 5_000;
const RUNS = 7;
const YEAR_START = Date.UTC(2026, 0, 1);
const YEAR_MS = 334 * 86_400_000;

const words = [
  "refactor",
  "parser",
  "tests",
  "deploy",
  "bug",
  "schema",
  "button",
  "cache",
  "login",
  "docs",
  "api",
  "query",
];
const stored = (ms: number) => new Date(ms).toISOString().replace("Z", "+00:00");

/** Deterministic pseudo-random numbers, so every run seeds the same data. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function seed(file: string): void {
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = OFF");
  const random = rng(42);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const users = Array.from({ length: USERS }, (_, i) => `user${i}`);
  const workspaces = Array.from({ length: WORKSPACES }, (_, i) => `ws${i}`);
  db.transaction(() => {
    const user = db.prepare("INSERT INTO User (id, email, name, isAdmin, createdAt) VALUES (?, ?, ?, 0, ?)");
    for (const id of users) user.run(id, `${id}@bench.test`, id, stored(YEAR_START));
    const ws = db.prepare("INSERT INTO Workspace (id, name, slug, rootPath, createdAt) VALUES (?, ?, ?, ?, ?)");
    const member = db.prepare(
      "INSERT INTO Membership (id, workspaceId, userId, role, createdAt) VALUES (?, ?, ?, ?, ?)",
    );
    workspaces.forEach((id, w) => {
      ws.run(id, id, id, `/bench/${id}`, stored(YEAR_START));
      for (let u = 0; u < USERS; u += 1) {
        if ((u + w) % 3 === 0 || u === 0)
          member.run(`${id}-${u}`, id, users[u]!, u === 0 ? "owner" : "editor", stored(YEAR_START));
      }
    });
  })();
  const sessions: { id: string; ws: string; user: string; at: number }[] = [];
  const session = db.prepare(
    `INSERT INTO Session (id, workspaceId, createdById, status, mode, model, title, searchText, createdAt, updatedAt, lastActivityAt)
     VALUES (?, ?, ?, 'stopped', 'default', ?, ?, ?, ?, ?, ?)`,
  );
  const event = db.prepare(
    "INSERT INTO SessionEvent (sessionId, seq, kind, payload, commandId, userId, createdAt) VALUES (?, ?, ?, ?, ?, ?, ?)",
  );
  const eventsPerSession = EVENTS / SESSIONS;
  const promptsPerSession = 10;
  for (let batch = 0; batch < SESSIONS; batch += 500) {
    db.transaction(() => {
      for (let i = batch; i < Math.min(batch + 500, SESSIONS); i += 1) {
        const id = `s${i}`;
        const ws = pick(workspaces);
        const user = pick(users);
        const at = YEAR_START + Math.floor((i / SESSIONS) * YEAR_MS);
        const prompts = Array.from(
          { length: promptsPerSession },
          (_, p) => `please ${pick(words)} the ${pick(words)} module, step ${p} of session ${i}`,
        );
        const replies = prompts.map((p) => `Done: I looked at ${p.slice(7, 40)} and changed ${pick(words)}.`);
        const text = prompts
          .flatMap((p, k) => [p, replies[k]!])
          .join("\n")
          .toLowerCase();
        session.run(
          id,
          ws,
          user,
          i % 4 === 0 ? "claude-sonnet" : null,
          prompts[0]!.slice(0, 40),
          text,
          stored(at),
          stored(at),
          stored(at),
        );
        sessions.push({ id, ws, user, at });
        for (let seq = 1; seq <= eventsPerSession; seq += 1) {
          const createdAt = stored(at + seq * 1000);
          if (seq % promptsPerSession === 1) {
            const p = prompts[Math.floor(seq / promptsPerSession)] ?? "";
            event.run(
              id,
              seq,
              "prompt",
              JSON.stringify({ text: p, uuid: `${id}-${seq}` }),
              `${id}-c${seq}`,
              user,
              createdAt,
            );
          } else {
            const payload = JSON.stringify({
              type: "assistant",
              message: {
                role: "assistant",
                content: [{ type: "text", text: `${pick(words)} ${pick(words)} ${"x".repeat(120)}` }],
              },
              session_id: id,
            });
            event.run(id, seq, "cli", payload, null, null, createdAt);
          }
        }
      }
    })();
  }
  const cost = db.prepare(
    `INSERT INTO CostEntry (id, resultId, sessionId, userId, workspaceId, model, inputTokens, outputTokens, cacheReadTokens,
       cacheWriteTokens, usd, numTurns, durationMs, durationApiMs, isError, permissionDenials, at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0, ?)`,
  );
  db.transaction(() => {
    // Half turn rows, half usage rows: as the ledger writes them.
    for (let i = 0; i < COST_ENTRIES / 2; i += 1) {
      const s = sessions[i % SESSIONS]!;
      const at = stored(s.at + (i / SESSIONS) * 60_000);
      const model = s.id.endsWith("0") ? "claude-sonnet" : "claude-opus-5-5";
      cost.run(`c${i}`, `r${i}`, s.id, s.user, s.ws, model, 0, 0, 0, 0, 0, 1, 2000, 1500, at);
      cost.run(`c${i}u`, `r${i}#${model}`, s.id, s.user, s.ws, model, 1000, 2000, 3000, 4000, 0.0646, 0, 0, 0, at);
    }
  })();
  const approval = db.prepare(
    `INSERT INTO Approval (id, sessionId, requestId, toolName, input, status, decidedById, decidedAt, createdAt)
     VALUES (?, ?, ?, 'Bash', '{}', ?, ?, ?, ?)`,
  );
  db.transaction(() => {
    for (let i = 0; i < APPROVALS; i += 1) {
      const s = sessions[(i * 7) % SESSIONS]!;
      const status = i % 10 === 0 ? "expired" : i % 3 === 0 ? "denied" : "allowed";
      const decided = status === "expired" ? null : stored(s.at + 5000 + (i % 60) * 1000);
      approval.run(`a${i}`, s.id, `q${i}`, status, status === "expired" ? null : s.user, decided, stored(s.at + 5000));
    }
  })();
  db.pragma("optimize");
  db.close();
}

async function p50(fn: () => Promise<unknown>): Promise<number> {
  await fn();
  const times: number[] = [];
  for (let i = 0; i < RUNS; i += 1) {
    const start = performance.now();
    await fn();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

export default async function run(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "conduit-bench-reports-"));
  const file = path.join(dir, "conduit.db");
  let db: Db | undefined;
  try {
    await deployMigrations({ url: `file:${file}` });
    const seedStart = performance.now();
    seed(file);
    console.log(
      `seeded ${EVENTS} events, ${COST_ENTRIES} cost entries in ${Math.round(performance.now() - seedStart)} ms`,
    );
    db = createDb(`file:${file}`);
    const yearly = { from: new Date(YEAR_START), to: new Date(YEAR_START + 366 * 86_400_000) };
    const member = await db.membership.findMany({ where: { userId: "user3" }, select: { workspaceId: true } });
    const memberScope = { userId: "user3", workspaceIds: member.map((m) => m.workspaceId) };
    const reports: [string, ReportQuery][] = [
      ["admin year by day/user", { ...yearly, groupBy: "day", by: "user", scope: { all: true } }],
      ["admin year by week/workspace", { ...yearly, groupBy: "week", by: "workspace", scope: { all: true } }],
      ["admin year by month/model", { ...yearly, groupBy: "month", by: "model", scope: { all: true } }],
      ["member year by day/user", { ...yearly, groupBy: "day", by: "user", scope: memberScope }],
      [
        "admin one month by day/user",
        {
          from: new Date(Date.UTC(2026, 5, 1)),
          to: new Date(Date.UTC(2026, 6, 1)),
          groupBy: "day",
          by: "user",
          scope: { all: true },
        },
      ],
    ];
    let worst = 0;
    for (const [name, query] of reports) {
      const ms = await p50(() => buildReport(db!, "sqlite", query));
      worst = Math.max(worst, ms);
      console.log(`report ${name}: p50 ${ms.toFixed(1)} ms`);
    }
    const allWorkspaces = Array.from({ length: WORKSPACES }, (_, i) => `ws${i}`);
    const searches: [string, Parameters<typeof listSessionHistory>[1]][] = [
      ["first page", { workspaceIds: allWorkspaces }],
      ["common word", { workspaceIds: allWorkspaces, q: "parser" }],
      ["rare phrase", { workspaceIds: allWorkspaces, q: "session 9876" }],
      ["no match", { workspaceIds: allWorkspaces, q: "nonexistentword" }],
      ["member, word + user", { workspaceIds: memberScope.workspaceIds, q: "deploy", userId: "user5" }],
    ];
    let worstSearch = 0;
    for (const [name, query] of searches) {
      const ms = await p50(() => listSessionHistory(db!, query));
      worstSearch = Math.max(worstSearch, ms);
      console.log(`history ${name}: p50 ${ms.toFixed(1)} ms`);
    }
    console.log(`reports: events=${EVENTS} worst_p50_ms=${Math.round(worst)} search_p50_ms=${Math.round(worstSearch)}`);
  } finally {
    await db?.$disconnect();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  run().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
