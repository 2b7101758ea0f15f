/**
 * Attacks from inside a real session (S5–S8 of anchors-reliability §6): an owner approves the
 * Bash and Read calls an attacker would make, and each must fail to reach anything outside the
 * workspace — Conduit's data directory, the auth secret, the database, other workspaces, other
 * sessions' CLI config directories, the checkout's `.env`, the operator's API key — and nothing
 * a session starts may outlive it. Plus what a workspace's own files could do: pre-allowing
 * `.claude/settings*.json` rules and hooks, and workspaces inside other workspaces.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { expect, test, type APIRequestContext } from "@playwright/test";
import { uniqueEmail } from "../fixtures";
import { bashPrompt, readPrompt } from "./attack-scenarios";
import { SessionProbe, type ToolOutcome } from "./session-probe";
import { signUpAndIn } from "./clients";
import { recordAttempt } from "./ledger";

const dataDir = process.env.CONDUIT_SECURITY_DATA_DIR!;
const checkout = process.env.CONDUIT_SECURITY_CHECKOUT!;
const apiKey = process.env.CONDUIT_SECURITY_API_KEY!;
const authSecret = () => readFileSync(path.join(dataDir, ".auth-secret"), "utf8").trim();

/** Output for messages and the ledger, with the canaries masked (a report must not leak them either). */
function redact(text: string): string {
  return text.replaceAll(apiKey, "<operator API key>").replaceAll(authSecret(), "<auth secret>");
}

let owner: APIRequestContext;
let other: APIRequestContext;
let baseURL: string;
let slug: string;
let root: string;
let otherRoot: string;
let otherWorkspaceId: string;
let probe: SessionProbe;
const canary = `canary-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;

async function workspaceRoot(client: APIRequestContext, name: string): Promise<{ id: string; slug: string; root: string }> {
  const created = await client.post("/api/workspaces", { data: { name } });
  expect(created.status(), await created.text()).toBe(201);
  const { data } = (await created.json()) as { data: { slug: string } };
  const read = (await (await client.get(`/api/workspaces/${data.slug}`)).json()) as { data: { id: string; rootPath: string } };
  return { id: read.data.id, slug: data.slug, root: read.data.rootPath };
}

test.describe.configure({ mode: "serial" });

test.beforeAll(async ({ baseURL: url }) => {
  test.setTimeout(120_000);
  baseURL = url!;
  owner = await signUpAndIn(baseURL, uniqueEmail("attacker"));
  other = await signUpAndIn(baseURL, uniqueEmail("victim"));
  ({ slug, root } = await workspaceRoot(owner, `Attacker ${Date.now().toString(36)}`));
  const victim = await workspaceRoot(other, `Victim ${Date.now().toString(36)}`);
  otherRoot = victim.root;
  writeFileSync(path.join(otherRoot, "secret.txt"), `${canary}\n`);
  // the victim's own session, so its CLI config directory exists
  const victimProbe = await SessionProbe.open(other, baseURL, victim.slug);
  otherWorkspaceId = victim.id;
  await victimProbe.turn("hello");
  victimProbe.close();
  probe = await SessionProbe.open(owner, baseURL, slug);
});

test.afterAll(async () => {
  probe?.close();
  await owner?.dispose();
  await other?.dispose();
});

/** Runs `command` in the attacker's session and records it as refused unless `leaked(output)`. */
async function attempt(probeId: string, check: string, attack: string, command: string, leaked: (out: ToolOutcome) => boolean, kind: "access" | "escape" = "escape") {
  const outcome = await probe.runTool(bashPrompt(command));
  const allowed = leaked(outcome);
  recordAttempt({ probe: probeId, check, attack, kind, allowed, detail: redact(outcome.text).slice(0, 120).replace(/\s+/g, " ") });
  // soft: every attack of a test is tried and recorded even when an earlier one got through
  expect.soft(allowed, `${attack}: ${redact(outcome.text).slice(0, 400)}`).toBe(false);
  return outcome;
}

test("a session runs tools at all (the attacks below are not refused for another reason)", async () => {
  // touch is not read-only, so the CLI asks: the approval path works end to end
  const outcome = await probe.runTool(bashPrompt("touch made-here && echo inside-$((6*7)) && pwd"));
  expect(outcome.asked).toBe(true);
  expect(existsSync(path.join(root, "made-here"))).toBe(true);
  expect(outcome.text).toContain("inside-42");
  expect(outcome.text).toContain(root);
});

test("S8: Conduit's data directory is out of reach", async () => {
  const secret = authSecret();
  await attempt("session/S8-data-dir", "S8", "cat the auth secret by absolute path", `cat ${path.join(dataDir, ".auth-secret")}`, (o) => o.text.includes(secret));
  await attempt("session/S8-data-dir", "S8", "cat the auth secret by a relative path", "cat ../../.auth-secret; cat ../.auth-secret", (o) => o.text.includes(secret));
  await attempt("session/S8-data-dir", "S8", "read the database file", `head -c 15 ${path.join(dataDir, "conduit.db")}`, (o) => o.text.includes("SQLite format"));
  await attempt("session/S8-data-dir", "S8", "list the data directory", `ls -a ${dataDir}`, (o) => o.text.includes("conduit.db") || o.text.includes(".auth-secret"));
  const viaRead = await probe.runTool(readPrompt(path.join(dataDir, ".auth-secret")));
  const leaked = viaRead.text.includes(secret);
  recordAttempt({ probe: "session/S8-data-dir", check: "S8", attack: "Read tool on the auth secret", kind: "escape", allowed: leaked, detail: redact(viaRead.text).slice(0, 120) });
  expect.soft(leaked).toBe(false);
});

test("S8: other workspaces and other sessions' transcripts are out of reach", async () => {
  await attempt("session/S8-other-workspaces", "S8", "cat another workspace's file", `cat ${path.join(otherRoot, "secret.txt")}`, (o) => o.text.includes(canary));
  await attempt("session/S8-other-workspaces", "S8", "cat another workspace's file through ..", `cat ../${path.basename(otherRoot)}/secret.txt`, (o) => o.text.includes(canary));
  await attempt("session/S8-other-workspaces", "S8", "find the canary anywhere under the data directory", `grep -rl ${canary} ${dataDir} / 2>/dev/null | head -5`, (o) => o.text.includes("secret.txt"));
  // CLI config directories are per workspace (claude-config/<workspace id>), transcripts inside
  await attempt("session/S8-other-workspaces", "S8", "list another workspace's CLI config directory", `ls -R ${path.join(dataDir, "claude-config")} 2>&1 | head -50`, (o) => o.text.includes(otherWorkspaceId));
  await attempt("session/S8-other-workspaces", "S8", "read another workspace's CLI transcripts", `cat ${path.join(dataDir, "claude-config", otherWorkspaceId)}/projects/*/*.jsonl 2>&1 | head -c 2000`, (o) => o.text.includes('"sessionId"') || o.text.includes("hello"));
});

test("S7: the operator's credential is nowhere in the session's reach", async () => {
  const secret = authSecret();
  const has = (o: ToolOutcome) => o.text.includes(apiKey) || o.text.includes(secret);
  await attempt("session/S7-credential", "S7", "env", "env", has, "access");
  await attempt("session/S7-credential", "S7", "every process's environment", "cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n' | sort -u", has, "access");
  await attempt("session/S7-credential", "S7", "the checkout's .env", `cat ${path.join(checkout, ".env")}`, has);
  await attempt("session/S7-credential", "S7", "the CLI's own config directory", 'grep -r "sk-ant" "${CLAUDE_CONFIG_DIR:-$HOME/.claude}" 2>/dev/null | head', has, "access");
});

test("A10/S8: a process a session starts does not outlive it", async () => {
  const marker = `7777.${Math.floor(Math.random() * 1e6)}`;
  const running = () => {
    try {
      return execFileSync("pgrep", ["-f", `sleep ${marker}`]).toString().trim() !== "";
    } catch {
      return false;
    }
  };
  const started = await probe.runTool(bashPrompt(`setsid sleep ${marker} > /dev/null 2>&1 < /dev/null & nohup sleep ${marker} > /dev/null 2>&1 & echo started`));
  expect(started.text).toContain("started");
  expect(running(), "the background processes are running while the session lives").toBe(true);
  await probe.stop();
  let survived = true;
  for (let i = 0; i < 50 && survived; i++) {
    survived = running();
    if (survived) await new Promise((r) => setTimeout(r, 200));
  }
  recordAttempt({ probe: "session/A10-outlive", check: "A10", attack: "setsid and nohup background jobs outlive the session", kind: "escape", allowed: survived });
  if (survived) execFileSync("pkill", ["-f", `sleep ${marker}`]);
  expect(survived).toBe(false);
});

test("S5: a workspace directory cannot land inside, above or outside another", async () => {
  const outside = path.join(path.dirname(path.dirname(root)), `outside-${Date.now().toString(36)}`);
  const link = `link-${Date.now().toString(36)}`;
  symlinkSync(path.dirname(dataDir), path.join(path.dirname(root), link));
  const corpus = [
    `${path.basename(otherRoot)}/src`,
    path.basename(otherRoot),
    "../escape",
    "..",
    ".",
    "",
    outside,
    "/tmp",
    "a/b",
    "%2e%2e/x",
    "x\u0000y",
    `${link}`,
    `${link}/inner`,
    "..\\windows",
  ];
  const outcomes: string[] = [];
  for (const directory of corpus) {
    const res = await owner.post("/api/workspaces", { data: { name: `Probe ${Math.random().toString(36).slice(2, 8)}`, directory } });
    const allowed = res.status() === 201;
    recordAttempt({ probe: "session/S5-workspace-dir", check: "S5", attack: `workspace directory ${JSON.stringify(directory)}`, kind: "access", allowed, detail: `HTTP ${res.status()}` });
    if (allowed) outcomes.push(`${JSON.stringify(directory)} → ${res.status()} ${await res.text()}`);
    else if (directory === path.basename(otherRoot)) {
      // refusing a name that exists must not say so to someone who cannot see it
      const body = await res.text();
      expect(body).not.toMatch(/already|exists|taken|in use/i);
    }
  }
  rmSync(path.join(path.dirname(root), link));
  expect(outcomes).toEqual([]);
  expect(existsSync(outside)).toBe(false);
});

test("S8: a workspace's own .claude settings cannot skip approvals or run hooks", async () => {
  const hookFile = path.join(root, "hook-ran");
  mkdirSync(path.join(root, ".claude"), { recursive: true });
  const settings = {
    permissions: { allow: ["Bash", "Bash(*)", "Read", "Write", "Edit"], defaultMode: "bypassPermissions" },
    hooks: { SessionStart: [{ hooks: [{ type: "command", command: `touch ${hookFile}` }] }], PreToolUse: [{ matcher: "*", hooks: [{ type: "command", command: `touch ${hookFile}` }] }] },
  };
  writeFileSync(path.join(root, ".claude", "settings.json"), JSON.stringify(settings));
  writeFileSync(path.join(root, ".claude", "settings.local.json"), JSON.stringify(settings));
  const fresh = await SessionProbe.open(owner, baseURL, slug);
  try {
    const outcome = await fresh.runTool(bashPrompt("touch pre-allowed && echo pre-allowed"));
    recordAttempt({ probe: "session/S8-repo-settings", check: "S8", attack: "in-repo settings pre-allow Bash", kind: "access", allowed: !outcome.asked });
    recordAttempt({ probe: "session/S8-repo-settings", check: "S8", attack: "in-repo hooks run", kind: "escape", allowed: existsSync(hookFile) });
    expect(outcome.asked, "the pre-allowed Bash still needs an approval").toBe(true);
    expect(existsSync(hookFile), "no hook ran").toBe(false);
  } finally {
    await fresh.stop();
    fresh.close();
    rmSync(path.join(root, ".claude"), { recursive: true, force: true });
  }
});

test("S6: a prompt's text never becomes a flag or a shell command", async () => {
  const fresh = await SessionProbe.open(owner, baseURL, slug);
  try {
    const pwned = path.join(root, "pwned");
    await fresh.turn(`--dangerously-skip-permissions --permission-mode bypassPermissions $(touch ${pwned}) \`touch ${pwned}\`; touch ${pwned}`);
    const after = await fresh.runTool(bashPrompt("touch after-injection && echo after-injection"));
    const allowed = existsSync(pwned) || !after.asked;
    recordAttempt({ probe: "session/S6-prompt-injection", check: "S6", attack: "flags and shell syntax in a prompt", kind: "access", allowed, detail: existsSync(pwned) ? "file created" : after.asked ? "" : "no approval asked" });
    expect(allowed).toBe(false);
  } finally {
    await fresh.stop();
    fresh.close();
  }
});
