/**
 * `npm run test:chaos`: the fault suite on one machine (docs/CHAOS.md). Starts the real sidecar
 * (restarted after a crash by `npm start`'s policy), the scripted model, the real and the fake
 * CLI, runs each scenario of test/chaos/scenarios.ts within its time bound, and prints
 *
 *   chaos: faults=<n> events_lost=0 events_dup=0 approvals_lost=0 cost_double=0 prompts_lost=0
 *
 * from the checks (clients' views against the database log, prompts sent vs logged vs answered,
 * approvals left pending, cost rows vs the CLI's results). Writes a Markdown and a JSON report
 * (`--report <path.md>`, default test-results/chaos/report.md). Exit code 1 when a count is not
 * zero or a scenario failed. `--only A1,A4` runs some; `--keep` keeps the temp directory. Each
 * scenario is bounded by its nominal time × CHAOS_TIME_SCALE (default 2.5).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { addCounts, createWorld, zeroCounts, type Counts } from "../test/chaos/rig";
import { scenarios, type ScenarioOutcome } from "../test/chaos/scenarios";

interface Row {
  id: string;
  title: string;
  status: "passed" | "failed" | "skipped";
  seconds: number;
  faults: number;
  counts: Partial<Counts>;
  problems: string[];
  notes: string[];
}

function flag(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index === -1 ? undefined : process.argv[index + 1];
}

function withinMs<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms / 1000} s`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

async function main(): Promise<number> {
  const root = path.resolve(import.meta.dirname, "..");
  const reportFile = path.resolve(flag("--report") ?? path.join(root, "test-results", "chaos", "report.md"));
  const only = flag("--only")?.split(",");
  // Each scenario's bound is its nominal time (a quiet 2-core machine) times this; CI machines shared
  // with other jobs run several times slower. CHAOS_TIME_SCALE overrides it.
  const timeScale = Number(process.env.CHAOS_TIME_SCALE ?? 2.5);
  const started = Date.now();
  const world = await createWorld({ keep: process.argv.includes("--keep") });
  process.stdout.write(`chaos: world ready in ${((Date.now() - started) / 1000).toFixed(1)} s (${world.dir})\n`);
  const rows: Row[] = [];
  const totals = zeroCounts();
  let faults = 0;
  try {
    for (const scenario of scenarios) {
      if (only && !only.includes(scenario.id)) continue;
      const skipped = scenario.skip?.();
      if (skipped !== undefined) {
        rows.push({
          id: scenario.id,
          title: scenario.title,
          status: "skipped",
          seconds: 0,
          faults: 0,
          counts: {},
          problems: [],
          notes: [skipped],
        });
        process.stdout.write(`chaos: ${scenario.id} skipped: ${skipped}\n`);
        continue;
      }
      const t0 = Date.now();
      let outcome: ScenarioOutcome;
      try {
        outcome = await withinMs(scenario.run(world), scenario.timeoutMs * timeScale, scenario.id);
      } catch (err) {
        outcome = {
          faults: 0,
          counts: {},
          problems: [`failed: ${err instanceof Error ? err.message : String(err)}`],
          notes: [],
        };
      }
      // whatever a scenario left running, the next starts from a serving sidecar and no clients
      for (const client of world.clients.splice(0)) client.close();
      if (!world.sidecar.alive()) await world.sidecar.start().catch(() => undefined);
      const counted = Object.values(outcome.counts).some((n) => (n ?? 0) > 0);
      const row: Row = {
        id: scenario.id,
        title: scenario.title,
        status: outcome.problems.length === 0 && !counted ? "passed" : "failed",
        seconds: (Date.now() - t0) / 1000,
        ...outcome,
      };
      rows.push(row);
      faults += outcome.faults;
      addCounts(totals, outcome.counts);
      process.stdout.write(
        `chaos: ${row.id} ${row.status} in ${row.seconds.toFixed(1)} s (faults ${row.faults})${row.problems.length ? `: ${row.problems.join("; ")}` : ""}\n`,
      );
    }
  } finally {
    await world.close();
  }
  const line = `chaos: faults=${faults} ${Object.entries(totals)
    .map(([k, v]) => `${k}=${v}`)
    .join(" ")}`;
  const failed = rows.filter((r) => r.status === "failed");
  writeReport(reportFile, rows, line, (Date.now() - started) / 1000);
  process.stdout.write(
    `chaos: report in ${path.relative(root, reportFile)} (${rows.length} scenarios, ${failed.length} failed, ${rows.filter((r) => r.status === "skipped").length} skipped, ${((Date.now() - started) / 1000).toFixed(0)} s)\n`,
  );
  process.stdout.write(`${line}\n`);
  return failed.length > 0 || Object.values(totals).some((n) => n > 0) ? 1 : 0;
}

function writeReport(file: string, rows: readonly Row[], line: string, seconds: number): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const md = [
    "# Chaos report",
    "",
    `\`${line}\``,
    "",
    `${new Date().toISOString()}, ${seconds.toFixed(0)} s. Scenarios are described in docs/CHAOS.md.`,
    "",
    "| scenario | status | s | faults | findings |",
    "|---|---|---|---|---|",
    ...rows.map(
      (r) =>
        `| ${r.id}: ${r.title} | ${r.status} | ${r.seconds.toFixed(1)} | ${r.faults} | ${[...r.problems, ...r.notes].join("<br>").replace(/\|/g, "\\|") || "—"} |`,
    ),
    "",
  ].join("\n");
  writeFileSync(file, md);
  writeFileSync(
    file.replace(/\.md$/, "") + ".json",
    `${JSON.stringify({ line, seconds, scenarios: rows }, null, 2)}\n`,
  );
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`chaos: failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
