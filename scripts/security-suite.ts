/**
 * `npm run test:security`: attacks a real Conduit (edge, web, sidecar, sandboxed CLI children)
 * started from a fresh copy of this tree the way an operator runs it, with canary secrets: the
 * operator's API key in the checkout's `.env` (pointing the CLI at the scripted model as its
 * gateway) and the generated auth secret. The specs in e2e/security record every attempt in a
 * ledger; afterwards the instance's logs, database, CLI config directories and the test output
 * are scanned for the canaries. Prints
 *
 *   security: attempts=<n> allowed=<n> secrets_found=<n> escapes=<n> missing_probes=<n>
 *
 * and writes test-results/security/report.md. Exits non-zero when a spec failed, an attempt got
 * through, a secret was found, or a probe of e2e/security/probes.ts recorded fewer attempts than
 * listed (or one not listed was recorded): a spec that stops running must not pass as "fewer
 * attempts".
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { cpSync, createWriteStream, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { findProjectRoot } from "../server/db/database-url";
import { startModelServer } from "../server/model-server/model-server";
import { attackScenarios } from "../e2e/security/attack-scenarios";
import { expectedProbes } from "../e2e/security/probes";
import type { Attempt } from "../e2e/security/ledger";
import { freePorts, groupAlive, makeFreshClone, removeClone } from "../e2e/support/fresh-clone";

const root = findProjectRoot(path.dirname(new URL(import.meta.url).pathname));
const out = path.join(root, "test-results", "security");

function say(line: string): void {
  process.stdout.write(`[security] ${line}\n`);
}

/** Every file below `dir` (following no links), for the secret scan. */
function filesBelow(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...filesBelow(full));
    else if (entry.isFile()) found.push(full);
  }
  return found;
}

interface Finding {
  secret: string;
  file: string;
  count: number;
}

/** Counts each secret's occurrences in each file (raw bytes: SQLite pages and WAL included). */
function scanForSecrets(files: string[], secrets: Record<string, string>): Finding[] {
  const findings: Finding[] = [];
  for (const file of files) {
    if (statSync(file).size > 512 * 1024 * 1024) continue;
    const bytes = readFileSync(file);
    for (const [name, value] of Object.entries(secrets)) {
      if (value.length < 16) continue;
      let count = 0;
      for (let at = bytes.indexOf(value); at >= 0; at = bytes.indexOf(value, at + 1)) count += 1;
      if (count > 0) findings.push({ secret: name, file, count });
    }
  }
  return findings;
}

/** A probe of probes.ts that recorded fewer attempts than listed, or one recorded but not listed. */
interface ProbeGap {
  probe: string;
  spec: string;
  expected: number;
  recorded: number;
}

/**
 * The probes that did not run as listed. `args` are the Playwright arguments of this run: file
 * filters select the specs checked (Playwright matches them against the file's path); with an
 * option (a grep, say) only part of a spec may run, so probes are not checked at all.
 */
function probeGaps(attempts: readonly Pick<Attempt, "probe">[], args: readonly string[]): { gaps: ProbeGap[]; checked: string[]; partial: boolean } {
  const recorded = new Map<string, number>();
  for (const a of attempts) recorded.set(a.probe ?? "(none)", (recorded.get(a.probe ?? "(none)") ?? 0) + 1);
  const partial = args.some((a) => a.startsWith("-"));
  const filters = args.filter((a) => !a.startsWith("-"));
  const matches = (spec: string) =>
    filters.length === 0 ||
    filters.some((f) => {
      try {
        return new RegExp(f).test(`e2e/security/${spec}`);
      } catch {
        return `e2e/security/${spec}`.includes(f);
      }
    });
  const checked = partial ? [] : Object.keys(expectedProbes).filter(matches);
  const gaps: ProbeGap[] = [];
  const listed = new Map<string, string>();
  for (const [spec, probes] of Object.entries(expectedProbes)) for (const probe of Object.keys(probes)) listed.set(probe, spec);
  for (const spec of checked) {
    for (const [probe, expected] of Object.entries(expectedProbes[spec]!)) {
      const n = recorded.get(probe) ?? 0;
      if (n < expected) gaps.push({ probe, spec, expected, recorded: n });
    }
  }
  for (const [probe, n] of recorded) if (!listed.has(probe)) gaps.push({ probe, spec: "(not listed in e2e/security/probes.ts)", expected: 0, recorded: n });
  return { gaps, checked, partial };
}

function runPlaywright(env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve) => {
    // extra arguments go to Playwright (`npm run test:security -- network-policy` runs one spec)
    const child = spawn(process.execPath, ["node_modules/@playwright/test/cli.js", "test", "-c", "e2e/security/playwright.config.ts", ...process.argv.slice(2)], {
      cwd: root,
      env,
      stdio: "inherit",
    });
    child.on("exit", (code) => resolve(code ?? 1));
  });
}

async function main(): Promise<number> {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const ledger = path.join(out, "ledger.jsonl");
  const tokensFile = path.join(out, "session-tokens.txt");
  writeFileSync(ledger, "");
  writeFileSync(tokensFile, "");

  // no demo tour: a prompt that names no scenario gets a plain echo, never tool calls nobody answers
  const model = await startModelServer({ port: 0, demo: false, scenarios: attackScenarios });
  const apiKey = `sk-ant-api03-canary-${randomBytes(18).toString("base64url")}`;
  const clone = makeFreshClone(root);
  cpSync(path.join(root, "generated"), path.join(clone, "generated"), { recursive: true });
  // the operator's configuration: a real key and a gateway, in the checkout's .env
  writeFileSync(path.join(clone, ".env"), `ANTHROPIC_API_KEY=${apiKey}\nANTHROPIC_BASE_URL=${model.url}\n`);
  const [port, next, sidecar, modelPort] = await freePorts(4);
  const url = `http://127.0.0.1:${port}`;
  const logFile = path.join(out, "conduit.log");
  const log = createWriteStream(logFile);
  const child = spawn(process.execPath, ["--import", "tsx", "scripts/start.ts"], {
    cwd: clone,
    detached: true,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PORT: String(port),
      CONDUIT_NEXT_PORT: String(next),
      CONDUIT_SIDECAR_PORT: String(sidecar),
      CONDUIT_MODEL_PORT: String(modelPort),
      CONDUIT_SIGNUP: "open",
      CONDUIT_EDGE_RATE_LIMIT: "off",
      CONDUIT_SANDBOX: process.env.CONDUIT_SANDBOX ?? "bwrap",
      LOG_LEVEL: "info",
    } as Record<string, string> as NodeJS.ProcessEnv,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let printed = "";
  child.stdout!.on("data", (c: Buffer) => {
    printed += c.toString();
    log.write(c);
  });
  child.stderr!.on("data", (c: Buffer) => log.write(c));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));

  let specs = 1;
  try {
    say(`starting Conduit from a fresh copy at ${clone} (sandbox ${process.env.CONDUIT_SANDBOX ?? "bwrap"})`);
    // a build happens only when the copied .next is older than the sources (not after the e2e suite)
    const deadline = Date.now() + 600_000;
    while (!printed.includes("[conduit] ready in")) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`Conduit did not start:\n${printed.slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    say(`Conduit ready at ${url}`);
    specs = await runPlaywright({
      ...process.env,
      CONDUIT_SECURITY_URL: url,
      CONDUIT_SECURITY_SIDECAR_URL: `http://127.0.0.1:${sidecar}`,
      CONDUIT_SECURITY_LEDGER: ledger,
      CONDUIT_SECURITY_TOKENS: tokensFile,
      CONDUIT_SECURITY_CHECKOUT: clone,
      CONDUIT_SECURITY_DATA_DIR: path.join(clone, "data"),
      CONDUIT_SECURITY_API_KEY: apiKey,
    });
  } finally {
    try {
      process.kill(-child.pid!, "SIGINT");
    } catch {
      // already gone
    }
    await Promise.race([exited, new Promise((r) => setTimeout(r, 20_000))]);
    if (groupAlive(child.pid!)) process.kill(-child.pid!, "SIGKILL");
    await new Promise((r) => log.end(r));
    await model.close();
  }

  // The gateway must have seen the operator's key (the credential proxy swaps it in), or the
  // sessions never reached the model and the attacks above proved nothing.
  const keyed = model.requests.filter((r) => r.apiKey === apiKey).length;

  const attempts = readFileSync(ledger, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as Attempt);
  const allowed = attempts.filter((a) => a.allowed);
  const escapes = allowed.filter((a) => a.kind === "escape");
  const authSecretFile = path.join(clone, "data", ".auth-secret");
  const secrets: Record<string, string> = { "operator API key": apiKey };
  if (existsSync(authSecretFile)) secrets["auth secret"] = readFileSync(authSecretFile, "utf8").trim();
  readFileSync(tokensFile, "utf8").split("\n").filter(Boolean).forEach((t, i) => (secrets[`session token ${i + 1}`] = t));
  const scanned = [logFile, ...filesBelow(path.join(clone, "data")).filter((f) => f !== authSecretFile), ...filesBelow(path.join(out, "output"))];
  const findings = scanForSecrets(scanned, secrets);
  const secretsFound = findings.reduce((n, f) => n + f.count, 0);

  const playwrightArgs = process.argv.slice(2);
  const probes = probeGaps(attempts, playwrightArgs);
  const missingProbes = probes.gaps.length;

  const byCheck = new Map<string, { tried: number; allowed: number }>();
  for (const a of attempts) {
    const row = byCheck.get(a.check) ?? { tried: 0, allowed: 0 };
    row.tried += 1;
    if (a.allowed) row.allowed += 1;
    byCheck.set(a.check, row);
  }
  const report = [
    "# Security suite",
    "",
    `Conduit from a fresh copy of the tree, sandbox \`${process.env.CONDUIT_SANDBOX ?? "bwrap"}\`, the operator's key as a canary in the checkout's \`.env\`; ${new Date().toISOString()}.`,
    "",
    `- specs: ${specs === 0 ? "passed" : `FAILED (exit ${specs})`}`,
    `- attempts: ${attempts.length}, allowed: ${allowed.length}, escapes: ${escapes.length}`,
    `- secrets found: ${secretsFound} (scanned ${scanned.length} files for ${Object.keys(secrets).length} secrets: logs, database, CLI config directories, test output)`,
    `- model requests carrying the operator's key (proxied): ${keyed} of ${model.requests.length}`,
    `- probes: ${probes.partial ? "not checked (a partial run: Playwright options given)" : `${missingProbes} missing of ${probes.checked.reduce((n, spec) => n + Object.keys(expectedProbes[spec]!).length, 0)} listed for ${probes.checked.join(", ") || "no spec"}`}`,
    "",
    "| check | attempts | allowed |",
    "|---|---|---|",
    ...[...byCheck].sort().map(([check, row]) => `| ${check} | ${row.tried} | ${row.allowed} |`),
    "",
    ...(allowed.length > 0 ? ["## Allowed", "", ...allowed.map((a) => `- ${a.check} ${a.kind}: ${a.attack} — ${a.detail ?? ""}`), ""] : []),
    ...(missingProbes > 0
      ? [
          "## Missing probes",
          "",
          "Listed in e2e/security/probes.ts with fewer attempts in this run (a spec, test or loop that did not run), or recorded without being listed:",
          "",
          ...probes.gaps.map((g) => `- ${g.probe} (${g.spec}): ${g.recorded} recorded, ${g.expected} expected`),
          "",
        ]
      : []),
    ...(findings.length > 0 ? ["## Secrets found", "", ...findings.map((f) => `- ${f.secret} × ${f.count} in ${path.relative(clone, f.file)}`), ""] : []),
    "## Attempts",
    "",
    ...attempts.map((a) => `- ${a.allowed ? "ALLOWED" : "refused"} · ${a.check} · ${a.probe} · ${a.attack}${a.detail ? ` (${a.detail})` : ""}`),
    "",
  ].join("\n");
  writeFileSync(path.join(out, "report.md"), report);
  removeClone(clone);

  say(`report: ${path.relative(root, path.join(out, "report.md"))}`);
  for (const a of allowed) say(`ALLOWED ${a.check} ${a.attack} ${a.detail ?? ""}`);
  for (const f of findings) say(`SECRET ${f.secret} × ${f.count} in ${f.file}`);
  for (const g of probes.gaps) say(`MISSING PROBE ${g.probe} (${g.spec}): ${g.recorded} recorded, ${g.expected} expected`);
  if (keyed === 0) say("no model request carried the operator's key: the sessions never reached the model");
  console.log(`security: attempts=${attempts.length} allowed=${allowed.length} secrets_found=${secretsFound} escapes=${escapes.length} missing_probes=${missingProbes}`);
  return specs !== 0 || allowed.length > 0 || secretsFound > 0 || keyed === 0 || attempts.length === 0 || missingProbes > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
