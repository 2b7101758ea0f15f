/**
 * A long past session written straight into an instance's SQLite file, the way the sidecar
 * writes one: turns of a prompt, the CLI's init, streamed text deltas, the reply, a tool call
 * (Edit, Bash or Read, in turn) with its result, and the turn's result. For the long-session
 * benchmark and e2e/long-session.spec.ts; `turnMarker(n)` is text only turn n's reply holds.
 */
import { randomUUID } from "node:crypto";
import Database from "better-sqlite3";

export interface LongSessionSeed {
  sessionId: string;
  events: number;
  turns: number;
}

/** Text that appears in turn `n`'s final reply and nowhere else. */
export function turnMarker(n: number): string {
  return `Reply marker ${n}.`;
}

const stored = (ms: number) => new Date(ms).toISOString().replace("Z", "+00:00");

/** One turn's events (about twenty), starting at `seq`. */
function turnEvents(turn: number, userId: string, sessionUuid: string): { kind: string; payload: unknown; commandId?: string; userId?: string }[] {
  const messageId = `msg_${turn}_a`;
  const lines = [
    `Looking at step ${turn} of the refactor, the module keeps its state in a single map.`,
    " I will move the parsing into its own function so the handler only routes requests,",
    " then run the tests to make sure nothing else depends on the old shape.",
  ];
  const tool = turn % 3;
  const toolId = `toolu_${turn}`;
  const toolUse =
    tool === 0
      ? { type: "tool_use", id: toolId, name: "Edit", input: { file_path: `/work/project/src/module-${turn % 40}.ts`, old_string: `export function handle${turn}(req) {\n  return parse(req.body);\n}`, new_string: `export function handle${turn}(req) {\n  const body = parseBody(req);\n  return route(body);\n}` } }
      : tool === 1
        ? { type: "tool_use", id: toolId, name: "Bash", input: { command: `npm test -- module-${turn % 40}`, description: "Run the module's tests" } }
        : { type: "tool_use", id: toolId, name: "Read", input: { file_path: `/work/project/src/module-${turn % 40}.ts` } };
  const result =
    tool === 0
      ? `The file /work/project/src/module-${turn % 40}.ts has been updated.`
      : tool === 1
        ? `> test\n> vitest run module-${turn % 40}\n\n ✓ module-${turn % 40}.test.ts (12 tests) 41ms\n\n Test Files  1 passed (1)\n      Tests  12 passed (12)`
        : Array.from({ length: 30 }, (_, i) => `${String(i + 1).padStart(5)}→const value${i} = compute(${i}); // line ${i + 1} of module ${turn % 40}`).join("\n");
  const base = { session_id: sessionUuid, parent_tool_use_id: null };
  const delta = (text: string) => ({ type: "stream_event", event: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text } }, ...base, uuid: randomUUID() });
  const final = `Done with step ${turn}: the handler now only routes, parsing lives in \`parseBody\`, and the tests pass. ${turnMarker(turn)}`;
  return [
    { kind: "prompt", payload: { text: `Please do step ${turn} of the refactor and run the tests.`, uuid: randomUUID() }, commandId: `seed-${turn}-${randomUUID()}`, userId },
    { kind: "cli", payload: { type: "system", subtype: "init", cwd: "/work/project", session_id: sessionUuid, tools: ["Bash", "Edit", "Read"], model: "claude-sonnet-4-5", permissionMode: "default", claude_code_version: "2.1.332", uuid: randomUUID() } },
    { kind: "cli", payload: { type: "stream_event", event: { type: "message_start", message: { id: messageId, role: "assistant", model: "claude-sonnet-4-5", content: [] } }, ...base, uuid: randomUUID() } },
    { kind: "cli", payload: { type: "stream_event", event: { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }, ...base, uuid: randomUUID() } },
    ...lines.map((l) => ({ kind: "cli", payload: delta(l) })),
    { kind: "cli", payload: { type: "stream_event", event: { type: "content_block_stop", index: 0 }, ...base, uuid: randomUUID() } },
    { kind: "cli", payload: { type: "assistant", message: { id: messageId, role: "assistant", model: "claude-sonnet-4-5", content: [{ type: "text", text: lines.join("") }] }, ...base, uuid: randomUUID() } },
    { kind: "cli", payload: { type: "assistant", message: { id: messageId, role: "assistant", model: "claude-sonnet-4-5", content: [toolUse] }, ...base, uuid: randomUUID() } },
    { kind: "cli", payload: { type: "stream_event", event: { type: "message_stop" }, ...base, uuid: randomUUID() } },
    { kind: "cli", payload: { type: "user", message: { role: "user", content: [{ type: "tool_result", tool_use_id: toolId, content: result, is_error: false }] }, ...base, uuid: randomUUID(), tool_use_result: tool === 1 ? { stdout: result, stderr: "", interrupted: false } : undefined } },
    { kind: "cli", payload: { type: "stream_event", event: { type: "message_start", message: { id: `msg_${turn}_b`, role: "assistant", model: "claude-sonnet-4-5", content: [] } }, ...base, uuid: randomUUID() } },
    { kind: "cli", payload: { type: "stream_event", event: { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }, ...base, uuid: randomUUID() } },
    { kind: "cli", payload: delta(final.slice(0, 40)) },
    { kind: "cli", payload: delta(final.slice(40)) },
    { kind: "cli", payload: { type: "stream_event", event: { type: "content_block_stop", index: 0 }, ...base, uuid: randomUUID() } },
    { kind: "cli", payload: { type: "assistant", message: { id: `msg_${turn}_b`, role: "assistant", model: "claude-sonnet-4-5", content: [{ type: "text", text: final }] }, ...base, uuid: randomUUID() } },
    { kind: "cli", payload: { type: "stream_event", event: { type: "message_stop" }, ...base, uuid: randomUUID() } },
    { kind: "cli", payload: { type: "result", subtype: "success", is_error: false, duration_ms: 4200 + turn, num_turns: 2, result: final, total_cost_usd: 0.004 * turn, usage: { input_tokens: 1200, output_tokens: 180, cache_read_input_tokens: 9000, cache_creation_input_tokens: 0 }, ...base, uuid: randomUUID() } },
  ];
}

/**
 * Writes a stopped session of `events` events (whole turns, the last one cut short to fit) in
 * the workspace, started by `userEmail`, and returns its id. One transaction.
 */
export function seedLongSession(
  databaseFile: string,
  options: {
    workspaceId: string;
    userEmail: string;
    events: number;
    title?: string;
    /**
     * The seeded turns have no transcript in the CLI's config dir, so a prompt cannot resume
     * them. With this, the result lines are written with a space after their colons: the hub's
     * text search for `"type":"result"` misses them, counts the conversation as not started,
     * and a prompt starts a fresh CLI (the browser still parses and draws them).
     */
    startsFresh?: boolean;
  },
): LongSessionSeed {
  const db = new Database(databaseFile, { timeout: 20_000 });
  try {
    const user = db.prepare("SELECT id FROM User WHERE email = ?").get(options.userEmail) as { id: string } | undefined;
    if (!user) throw new Error(`no user ${options.userEmail}`);
    const sessionId = `long${randomUUID().replace(/-/g, "")}`;
    const claudeSessionId = randomUUID();
    const start = Date.now() - options.events * 1000;
    let seq = 0;
    let turns = 0;
    db.transaction(() => {
      db.prepare(
        `INSERT INTO Session (id, workspaceId, createdById, claudeSessionId, status, mode, title, createdAt, updatedAt, lastActivityAt)
         VALUES (?, ?, ?, ?, 'stopped', 'default', ?, ?, ?, ?)`,
      ).run(sessionId, options.workspaceId, user.id, claudeSessionId, options.title ?? "A long refactor", stored(start), stored(Date.now()), stored(Date.now()));
      const insert = db.prepare(`INSERT INTO SessionEvent (sessionId, seq, kind, payload, commandId, userId, createdAt) VALUES (?, ?, ?, ?, ?, ?, ?)`);
      while (seq < options.events) {
        turns += 1;
        for (const e of turnEvents(turns, user.id, claudeSessionId)) {
          if (seq >= options.events) break;
          seq += 1;
          const payload = JSON.stringify(e.payload);
          const text = options.startsFresh && payload.startsWith('{"type":"result"') ? payload.replace('{"type":"result"', '{"type": "result"') : payload;
          insert.run(sessionId, seq, e.kind, text, e.commandId ?? null, e.userId ?? null, stored(start + seq * 1000));
        }
      }
    })();
    return { sessionId, events: seq, turns };
  } finally {
    db.close();
  }
}
