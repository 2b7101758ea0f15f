// Issue 11's attacks from inside a real session (the real CLI, approved Bash and Read, in the
// bubblewrap sandbox with a credential-proxy token): nothing of the server's secrets is in reach,
// `env` shows no operator credential, and a `setsid` daemon does not outlive the session's
// process. Issue 37's tighter sandbox: an unprivileged uid inside (files still the sidecar's user
// outside), no TLS private keys, ptrace and friends refused by the seccomp filter while the CLI,
// git, node and bash work, no new user namespace, a /tmp and HOME of a fixed size. The control
// case (no sandbox) shows the same attacks succeeding, so the tests can fail.
import { execFileSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordAttempt } from "@/e2e/security/ledger";
import { sandboxTmpfsBytes } from "@/server/sidecar/process/sandbox-argv";
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
      recordAttempt({ probe: "vitest/sandbox-files", check: "S8", attack: `Bash cat ${targets[name as keyof typeof targets]}`, kind: "access", allowed: bash.text.includes(`ALLOWED ${name}`) });
    }
    for (const name of Object.keys(targets)) expect(bash.text).toContain(`DENIED ${name}`);
    expect(rig.secretsIn(bash.text)).toEqual([]);
    for (const file of Object.values(rig.layout.files)) {
      const read = await rig.read(file);
      recordAttempt({ probe: "vitest/sandbox-files", check: "S8", attack: `Read ${file}`, kind: "access", allowed: !read.isError || rig.secretsIn(read.text).length > 0 });
      expect(read.isError, `Read ${file}: ${read.text}`).toBe(true);
      expect(rig.secretsIn(read.text)).toEqual([]);
    }
  });

  it("sees no operator credential in its environment, argv or config directory", async () => {
    const outcome = await rig.bash(
      "env; cat /proc/1/cmdline /proc/$PPID/cmdline 2>/dev/null | tr '\\0' ' '; cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n'; grep -r . \"$CLAUDE_CONFIG_DIR\" 2>/dev/null | head -200",
    );
    recordAttempt({ probe: "vitest/sandbox-credential", check: "S7", attack: "Bash env, /proc/*/environ, the CLI config dir", kind: "access", allowed: rig.secretsIn(outcome.text).length > 0 });
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
    recordAttempt({ probe: "vitest/sandbox-credential", check: "S7", attack: "credential proxy with a guessed token and with the operator's key", kind: "access", allowed: outcome.text.trim() !== "401\n401" });
    expect(outcome.text.trim().split("\n")).toEqual(["401", "401"]);
  });

  it("runs as an unprivileged user inside, while its files belong to the sidecar's user on the host", async () => {
    const outcome = await rig.bash("id -u; id -g; whoami; echo \"home=$HOME user=$USER\"; grep -c . /etc/passwd; echo made > owned.txt; ls -ln owned.txt");
    expect(outcome.isError, outcome.text).toBe(false);
    const [uid, gid, name] = outcome.text.trim().split("\n");
    recordAttempt({ probe: "vitest/sandbox-uid", check: "S8", attack: "run as root inside the session's sandbox", kind: "escape", allowed: uid === "0" });
    expect([uid, gid, name]).toEqual(["1000", "1000", "session"]);
    expect(outcome.text).toContain("home=/home/session user=session");
    // The sandbox's own three-line user list, not the host's.
    expect(outcome.text).toMatch(/^3$/m);
    const stat = statSync(path.join(rig.layout.workspace, "owned.txt"));
    expect([stat.uid, stat.gid]).toEqual([process.getuid!(), process.getgid!()]);
  });

  it("sees the TLS certificate store but not /etc/ssl/private", async () => {
    const outcome = await rig.bash("ls /etc/ssl; test -s /etc/ssl/certs/ca-certificates.crt && echo ca-bundle-present; ls /etc/ssl/private 2>&1; echo ls-exit=$?");
    const allowed = !/ls-exit=2/.test(outcome.text);
    recordAttempt({ probe: "vitest/sandbox-files", check: "S8", attack: "ls /etc/ssl/private", kind: "access", allowed });
    expect(allowed, outcome.text).toBe(false);
    expect(outcome.text).toContain("ca-bundle-present");
    expect(outcome.text).toMatch(/No such file or directory/);
  });

  it("is refused ptrace and a new user namespace, while git, node and bash work", async () => {
    // perl's syscall(): ptrace(PTRACE_ATTACH, pid) on a sibling process (numbers of x86_64 and aarch64).
    const ptraceNr = process.arch === "arm64" ? 117 : 101;
    const outcome = await rig.bash(
      [
        "tail -f /dev/null & victim=$!",
        `perl -e '$r = syscall(${ptraceNr}, 16, $ARGV[0] + 0, 0, 0); print "ptrace=$r errno=", $! + 0, "\\n"' $victim`,
        "kill -KILL $victim",
        "unshare -U true 2>&1; echo unshare-exit=$?",
        "git init -q g && git -C g -c user.email=s@x -c user.name=s commit -q --allow-empty -m one && git -C g log --format=git-ok:%s",
        "node -e 'console.log(\"node-ok\", require(\"os\").userInfo().username)'",
        "bash -c 'echo bash-ok'",
      ].join("; "),
    );
    const allowed = !outcome.text.includes("ptrace=-1 errno=1");
    recordAttempt({ probe: "vitest/sandbox-seccomp", check: "S8", attack: "ptrace(PTRACE_ATTACH) of another process of the session", kind: "escape", allowed });
    expect(allowed, outcome.text).toBe(false);
    expect(outcome.text).toMatch(/unshare-exit=[1-9]/);
    expect(outcome.text).toContain("git-ok:one");
    expect(outcome.text).toContain("node-ok session");
    expect(outcome.text).toContain("bash-ok");
  });

  it("has a /tmp and a HOME of a fixed size", async () => {
    const over = (bytes: number) => `${Math.ceil(bytes / (1024 * 1024)) + 16}M`;
    const outcome = await rig.bash(
      `df -B1 --output=size /tmp ~ | tail -n 2; fallocate -l ${over(sandboxTmpfsBytes.tmp)} /tmp/big 2>&1; echo tmp-exit=$?; fallocate -l ${over(sandboxTmpfsBytes.home)} ~/big 2>&1; echo home-exit=$?; fallocate -l 1M /tmp/small && echo small-ok`,
    );
    const [tmpSize, homeSize] = outcome.text.trim().split("\n").map((line) => Number(line.trim()));
    expect([tmpSize, homeSize]).toEqual([sandboxTmpfsBytes.tmp, sandboxTmpfsBytes.home]);
    expect(outcome.text).toMatch(/No space left on device[\s\S]*tmp-exit=1/);
    expect(outcome.text).toMatch(/home-exit=1/);
    expect(outcome.text).toContain("small-ok");
  });

  it("ends a setsid daemon when the session's process stops", async () => {
    const name = `conduit-escapee-${randomBytes(6).toString("hex")}`;
    const outcome = await rig.bash(`setsid bash -c 'exec -a ${name} sleep 1000' >/dev/null 2>&1 < /dev/null & sleep 0.3; echo started`);
    expect(outcome.text).toContain("started");
    expect(pgrep(name).length).toBe(1);
    await rig.kit.runner.stop();
    const gone = await waitUntil(() => pgrep(name).length === 0, 5000);
    recordAttempt({ probe: "vitest/sandbox-outlive", check: "A10", attack: "setsid daemon outliving its session", kind: "escape", allowed: !gone });
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

  it("reads the auth secret and attaches to another process with ptrace: the attacks are real, the sandbox is what stops them", async () => {
    const ptraceNr = process.arch === "arm64" ? 117 : 101;
    const traced = await rig.bash(`tail -f /dev/null & victim=$!; perl -e '$r = syscall(${ptraceNr}, 16, $ARGV[0] + 0, 0, 0); print "ptrace=$r\\n"' $victim; kill -KILL $victim`);
    expect(traced.text).toContain("ptrace=0");
    const outcome = await rig.bash("cat ../../.auth-secret");
    expect(rig.secretsIn(outcome.text)).toEqual(["authSecret"]);
    // The proxy still keeps the operator's key out of the environment.
    const env = await rig.bash("env");
    expect(env.text).not.toContain(rig.secrets.operatorKey);
  });
});
