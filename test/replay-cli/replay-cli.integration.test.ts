/**
 * Every recorded run of the real CLI (`../shared/transcripts-real/*.jsonl`) replayed by the
 * stand-in (replay-cli.mjs) through a real session runner, as Conduit drives its CLI: each CLI
 * line of the recording arrives decoded, with Conduit's session id, the recording's control
 * requests are answered by the runner (the turn goes on only then), every turn ends, and nothing
 * is a bad line. The browser side is e2e/replay.spec.ts.
 */
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { createSessionRunner } from "@/server/sidecar/session/session-runner";
import type { RunnerEvent, SessionRunner } from "@/server/sidecar/session/session-runner-contract";
import { allowAsProposed } from "@/test/fake-cli/runner-kit";
import { expectationsOf, listRecordings, readRecording, recordingsDir } from "./recordings";

const script = fileURLToPath(new URL("./replay-cli.mjs", import.meta.url));
const dir = recordingsDir();
const names = listRecordings(dir);
if (names.length === 0) console.warn(`[replay] SKIPPED: no *.jsonl in ${dir}`);

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

async function replayRunner(): Promise<{ runner: SessionRunner; events: RunnerEvent[]; claudeSessionId: string; until: (test: () => boolean, what: string) => Promise<void> }> {
  const root = await mkdtemp(path.join(os.tmpdir(), "conduit-replay-"));
  const claudeSessionId = randomUUID();
  const runner = createSessionRunner(
    { sessionId: `session-${randomUUID()}`, workspaceRoot: root, configDir: path.join(root, "config"), claudeSessionId, resume: false, permissionMode: "default" },
    {
      cliPath: process.execPath,
      argsPrefix: [script, "--replay-dir", dir],
      decidePermission: allowAsProposed,
      baseEnv: process.env,
    },
  );
  const events: RunnerEvent[] = [];
  const wakers = new Set<() => void>();
  runner.onDidEvent((event) => {
    events.push(event);
    for (const wake of [...wakers]) wake();
  });
  cleanup = async () => {
    await runner.dispose();
    await rm(root, { recursive: true, force: true });
  };
  const until = (test: () => boolean, what: string) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (!test()) return;
        wakers.delete(check);
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        wakers.delete(check);
        reject(new Error(`${what}: not within 15 s; last events:\n${events.slice(-4).map((e) => JSON.stringify(e).slice(0, 300)).join("\n")}`));
      }, 15_000);
      wakers.add(check);
      check();
    });
  return { runner, events, claudeSessionId, until };
}

// Skipped only where the recordings folder is absent (a checkout without ../shared); CI has it.
describe.skipIf(names.length === 0)("the replay stand-in through a session runner", () => {
  it.each(names)("%s", async (name) => {
    const lines = readRecording(name, dir);
    const expected = expectationsOf(lines);
    const hostRequestIds = new Set(lines.filter((l) => l.out && l.value?.type === "control_request").map((l) => l.value?.request_id));
    // what the stand-in writes: every CLI line but its answers to the recorded host's own requests
    const written = lines.filter(
      (l) => !l.out && !(l.value?.type === "control_response" && hostRequestIds.has((l.value.response as { request_id?: unknown } | undefined)?.request_id)),
    );
    const resultsBefore: number[] = [];
    let results = 0;
    for (const line of lines) {
      if (line.out && line.value?.type === "user") resultsBefore.push(results);
      else if (!line.out && line.value?.type === "result") results++;
    }

    const { runner, events, claudeSessionId, until } = await replayRunner();
    const cliLines = () => events.flatMap((e) => (e.type === "line" ? [e] : []));
    const resultCount = () => cliLines().filter((e) => e.message.type === "result").length;
    for (const [i, prompt] of expected.prompts.entries()) {
      if (i > 0) await until(() => resultCount() >= (resultsBefore[i] ?? 0), `${name}: turn ${i}`);
      await runner.prompt({ uuid: randomUUID(), text: i === 0 ? `[replay:${name}] ${prompt}` : prompt });
    }
    await until(() => resultCount() >= expected.results && cliLines().length >= written.length, `${name}: the whole recording`);

    expect(events.filter((e) => e.type === "bad-line")).toEqual([]);
    const got = cliLines();
    expect(got.map((e) => `${e.message.type === "unknown" ? e.message.originalType : e.message.type}`)).toEqual(
      written.map((l) => String(l.value?.type)),
    );
    for (const event of got) {
      const value = JSON.parse(event.raw) as { session_id?: unknown };
      if (value.session_id !== undefined) expect(value.session_id).toBe(claudeSessionId);
    }
    // the control requests were answered by the runner (the replay waited for each answer)
    const requests = got.filter((e) => e.message.type === "control_request").length;
    expect(requests).toBe(written.filter((l) => l.value?.type === "control_request").length);
    expect(resultCount()).toBe(expected.results);
  });
});
