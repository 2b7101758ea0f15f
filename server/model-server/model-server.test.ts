import { createParser } from "eventsource-parser";
import { afterEach, describe, expect, it } from "vitest";
import { startModelServer, type ModelServer } from "./model-server";
import { say } from "./scenario";

let server: ModelServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

const body = (text: string) =>
  JSON.stringify({
    model: "claude-haiku-4-5",
    max_tokens: 100,
    stream: true,
    tools: [{ name: "Bash" }],
    messages: [{ role: "user", content: text }],
  });

describe("startModelServer", () => {
  it("listens on a free port on 127.0.0.1 and streams SSE over the socket", async () => {
    server = await startModelServer({ scenarios: [{ name: "hi", steps: [say("over the wire")] }] });
    expect(server.port).toBeGreaterThan(0);
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
    const response = await fetch(`${server.url}/v1/messages?beta=true`, {
      method: "POST",
      body: body("[scenario:hi]"),
    });
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const types: string[] = [];
    let text = "";
    const parser = createParser({
      onEvent: (event) => {
        types.push(event.event ?? "");
        const data = JSON.parse(event.data) as { delta?: { text?: string } };
        text += data.delta?.text ?? "";
      },
    });
    parser.feed(await response.text());
    expect(types[0]).toBe("message_start");
    expect(types.at(-1)).toBe("message_stop");
    expect(text).toBe("over the wire");
    expect(server.requests).toHaveLength(1);
  });

  it("serves the demo scenarios when asked to", async () => {
    server = await startModelServer({ demo: true });
    const health = (await (await fetch(`${server.url}/health`)).json()) as { scenarios: string[] };
    expect(health.scenarios).toContain("demo-tour");
    await (await fetch(`${server.url}/v1/messages`, { method: "POST", body: body("hello") })).text();
    expect(server.requests[0]?.scenario).toBe("demo-chat");
  });

  it("cancels the stream when the client goes away, and keeps serving", async () => {
    server = await startModelServer({
      scenarios: [{ name: "slow", steps: [say("a b c d e f g h i j", { chunkDelayMs: 1_000 })] }],
    });
    const abort = new AbortController();
    const response = await fetch(`${server.url}/v1/messages`, {
      method: "POST",
      body: body("[scenario:slow]"),
      signal: abort.signal,
    });
    const reader = response.body!.getReader();
    await reader.read();
    abort.abort();
    await expect(reader.read()).rejects.toThrow();
    const next = await fetch(`${server.url}/v1/messages`, { method: "POST", body: body("plain") });
    expect(next.status).toBe(200);
    await next.text();
  });

  it("closes promptly with a stream still open", async () => {
    server = await startModelServer({
      scenarios: [{ name: "slow", steps: [say("a b c d e f", { chunkDelayMs: 10_000 })] }],
    });
    const response = await fetch(`${server.url}/v1/messages`, { method: "POST", body: body("[scenario:slow]") });
    const reader = response.body!.getReader();
    await reader.read();
    const started = Date.now();
    await server.close();
    expect(Date.now() - started).toBeLessThan(1_000);
    await reader.read().catch(() => undefined);
    server = undefined;
  });

  it("reports a port already in use", async () => {
    server = await startModelServer();
    await expect(startModelServer({ port: server.port })).rejects.toThrow(/EADDRINUSE/);
  });
});
