// Issue 11's attacks from inside a real session (the real CLI, approved Bash and Read, in the
// bubblewrap sandbox with a credential-proxy token): nothing of the server's secrets is in reach,
// `env` shows no operator credential, and a `setsid` daemon does not outlive the session's
// process. The control case (no sandbox) shows the same attack succeeding, so the test can fail.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordAttempt } from "@/e2e/security/ledger";
import { startTenantRig, type TenantRig } from "./tenant-rig";

function pgrep(pattern: string): number[] {
  try {
    return execFileSync("pgrep", ["-f", pattern], { encoding: "utf8" }).trim().split("\n").filter(Boolean).map(Number);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

async function waitUntil(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return check();
}

describe("a sandboxed session", () => {
  let rig: TenantRig;
  beforeAll(async () => {
    rig = await startTenantRig();
    expect(rig.sandbox.mode).toBe("bwrap");
  });
  afterAll(async () => {
    await rig?.close();
  });

  it("reads and writes its own workspace at its real path", async () => {
    const outcome = await rig.bash("pwd && echo hello > mine.txt && cat mine.txt && ls -a ~ && id -u");
    expect(outcome.isError).toBe(false);
    expect(outcome.text).toContain(rig.layout.workspace);
    expect(outcome.text).toContain("hello");
    const file = path.join(rig.layout.workspace, "mine.txt");
    const read = await rig.read(file);
    expect(read).toMatchObject({ isError: false });
    expect(read.text).toContain("hello");
    const edit = await rig.tool("Edit", { file_path: file, old_string: "hello", new_string: "edited in the sandbox" });
    expect(edit.isError).toBe(false);
    expect(await readFile(file, "utf8")).toBe("edited in the sandbox\n");
  });

  it("cannot write outside its workspace, even where it can read", async () => {
    const outcome = await rig.bash(`touch /usr/conduit-probe; touch '${rig.layout.dataDir}/planted'; echo x > /etc/passwd; echo done`);
    expect(outcome.text).toContain("done");
    expect(outcome.text).toMatch(/Read-only file system|No such file or directory|Permission denied/);
    expect(existsSync("/usr/conduit-probe")).toBe(false);
    expect(existsSync(path.join(rig.layout.dataDir, "planted"))).toBe(false);
  });

  it("cannot reach the auth secret, the database, another workspace, the checkout's .env, another config dir or the sidecar's home", async () => {
    const targets = {
      authSecret: "../../.auth-secret",
      database: "../../conduit.db",
      otherWorkspaceFile: rig.layout.files.otherWorkspaceFile,
      dotEnv: rig.layout.files.dotEnv,
      otherTranscript: rig.layout.files.otherTranscript,
      sidecarHome: rig.layout.files.sidecarHome,
    };
    const script = Object.entries(targets)
      .map(([name, file]) => `if cat '${file}' 2>/dev/null; then echo "ALLOWED ${name}"; else echo "DENIED ${name}"; fi`)
      .join("; ");
    const bash = await rig.bash(`${script}; ls -la ../.. ../../.. 2>&1; find / -name '*.jsonl' -o -name '.auth-secret' 2>/dev/null | head`);
    for (const name of Object.keys(targets)) {
      recordAttempt({ check: "S8", attack: `Bash cat ${targets[name as keyof typeof targets]}`, kind: "access", allowed: bash.text.includes(`ALLOWED ${name}`) });
    }
    for (const name of Object.keys(targets)) expect(bash.text).toContain(`DENIED ${name}`);
    expect(rig.secretsIn(bash.text)).toEqual([]);
    for (const file of Object.values(rig.layout.files)) {
      const read = await rig.read(file);
      recordAttempt({ check: "S8", attack: `Read ${file}`, kind: "access", allowed: !read.isError || rig.secretsIn(read.text).length > 0 });
      expect(read.isError, `Read ${file}: ${read.text}`).toBe(true);
      expect(rig.secretsIn(read.text)).toEqual([]);
    }
  });

  it("sees no operator credential in its environment, argv or config directory", async () => {
    const outcome = await rig.bash(
      "env; cat /proc/1/cmdline /proc/$PPID/cmdline 2>/dev/null | tr '\\0' ' '; cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n'; grep -r . \"$CLAUDE_CONFIG_DIR\" 2>/dev/null | head -200",
    );
    recordAttempt({ check: "S7", attack: "Bash env, /proc/*/environ, the CLI config dir", kind: "access", allowed: rig.secretsIn(outcome.text).length > 0 });
    expect(outcome.isError).toBe(false);
    expect(outcome.text).toContain(`ANTHROPIC_BASE_URL=${rig.proxy.url}`);
    expect(outcome.text).toMatch(/ANTHROPIC_API_KEY=sk-ant-conduit-/);
    expect(outcome.text).not.toContain(rig.server.url);
    expect(rig.secretsIn(outcome.text)).toEqual([]);
    expect(rig.proxy.usageOf(rig.kit.options.sessionId).requests).toBeGreaterThan(0);
  });

  it("gets 401 from the credential proxy for a guessed token and for the operator's own key", async () => {
    // node is on every Conduit host (curl may not be); it runs inside the sandbox like any tool.
    const probe = (key: string) =>
      `node -e 'fetch(process.env.ANTHROPIC_BASE_URL + "/v1/messages", { method: "POST", headers: { "x-api-key": "${key}", "content-type": "application/json" }, body: "{}" }).then((r) => console.log(r.status))'`;
    const outcome = await rig.bash(`${probe("sk-ant-guessed")}; ${probe(rig.secrets.operatorKey)}`);
    recordAttempt({ check: "S7", attack: "credential proxy with a guessed token and with the operator's key", kind: "access", allowed: outcome.text.trim() !== "401\n401" });
    expect(outcome.text.trim().split("\n")).toEqual(["401", "401"]);
  });

  it("ends a setsid daemon when the session's process stops", async () => {
    const name = `conduit-escapee-${randomBytes(6).toString("hex")}`;
    const outcome = await rig.bash(`setsid bash -c 'exec -a ${name} sleep 1000' >/dev/null 2>&1 < /dev/null & sleep 0.3; echo started`);
    expect(outcome.text).toContain("started");
    expect(pgrep(name).length).toBe(1);
    await rig.kit.runner.stop();
    const gone = await waitUntil(() => pgrep(name).length === 0, 5000);
    recordAttempt({ check: "A10", attack: "setsid daemon outliving its session", kind: "escape", allowed: !gone });
    expect(gone).toBe(true);
    // The token died with the process.
    expect(rig.proxy.liveTokens).toBe(0);
  });
});

describe("the same attack without the sandbox (control)", () => {
  let rig: TenantRig;
  beforeAll(async () => {
    rig = await startTenantRig({ sandbox: "off" });
  });
  afterAll(async () => {
    await rig?.close();
  });

  it("reads the auth secret: the attack is real, the sandbox is what stops it", async () => {
    const outcome = await rig.bash("cat ../../.auth-secret");
    expect(rig.secretsIn(outcome.text)).toEqual(["authSecret"]);
    // The proxy still keeps the operator's key out of the environment.
    const env = await rig.bash("env");
    expect(env.text).not.toContain(rig.secrets.operatorKey);
  });
});
