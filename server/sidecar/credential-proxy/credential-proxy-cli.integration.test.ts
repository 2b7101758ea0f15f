// The pinned CLI through the credential proxy at its default caps, against the scripted model:
// a turn, a subagent, the context meter (a burst of ~26 token counts) pass with nothing refused
// or limited, and what the proxy metered is what the CLI's results report (nothing unreported).
import { afterEach, describe, expect, it } from "vitest";
import { callTool, say } from "@/server/model-server/scenario";
import { spawnTestCli, startCliEnv, type CliEnv } from "@/test/cli-env";
import { startCredentialProxy, type CredentialProxy } from "./credential-proxy";

let cliEnv: CliEnv | undefined;
let proxy: CredentialProxy | undefined;
afterEach(async () => {
  await cliEnv?.close();
  await proxy?.close();
  cliEnv = proxy = undefined;
});

const usage = { input_tokens: 1000, output_tokens: 2000, cache_read_input_tokens: 3000, cache_creation_input_tokens: 4000 };

describe("the real CLI through the credential proxy", () => {
  it("needs nothing beyond the allow-list and the default caps, and its results report all the metered spend", async () => {
    cliEnv = await startCliEnv({
      // bypassPermissions as root (the Agent tool runs without a prompt)
      extraEnv: { IS_SANDBOX: "1" },
      scenarios: [
        { name: "priced", steps: [say("Priced answer.", { usage })] },
        {
          name: "delegate",
          steps: [callTool("Agent", { description: "sub", prompt: "[scenario:priced] hi", subagent_type: "general-purpose" }, { text: "Delegating.", usage }), say("Sub done.", { usage })],
        },
      ],
    });
    proxy = await startCredentialProxy({ upstream: cliEnv.server.url, credential: { apiKey: "sk-ant-operator-real" } });
    const grant = proxy.issue("s");
    Object.assign(cliEnv.env, grant.env);
    const cli = spawnTestCli(cliEnv, ["--permission-mode", "bypassPermissions"]);
    const turn = async (text: string) => {
      const from = cli.messages.length;
      cli.send({ type: "user", message: { role: "user", content: text }, parent_tool_use_id: null, session_id: "" });
      const result = await cli.waitFor((m) => m.type === "result", { from, timeoutMs: 60_000 });
      expect(result.is_error).toBe(false);
    };
    await turn("[scenario:priced] go");
    await turn("[scenario:delegate] go");
    const from = cli.messages.length;
    cli.send({ type: "control_request", request_id: "ctx-1", request: { subtype: "get_context_usage" } });
    const context = await cli.waitFor((m) => m.type === "control_response", { from, timeoutMs: 60_000 });
    expect((context.response as { subtype: string }).subtype).toBe("success");

    const counted = cliEnv.server.requests.filter((r) => r.kind === "count_tokens").length;
    expect(counted).toBeGreaterThan(4);
    expect(proxy.usageOf("s")).toMatchObject({ forbidden: 0, limited: 0, overBudget: 0, refused: 0 });
    // The subagent's end starts one more turn of its own: its result reports the last calls.
    // total_cost_usd is cumulative per process, so the latest result holds everything.
    const reported = () => Math.max(...cli.messages.filter((m) => m.type === "result").map((m) => m.total_cost_usd as number));
    await expect.poll(() => Math.abs(proxy!.meterOf("s").usd - reported()), { timeout: 30_000 }).toBeLessThan(1e-6);
    const meter = proxy.meterOf("s");
    expect(meter.calls).toBe(cliEnv.server.requests.filter((r) => r.kind === "messages").length);
    expect(meter.usd).toBeGreaterThan(0.0646 * 4);
    // The CLI billed every call the proxy metered, at the same rates: nothing stays unreported.
    proxy.reportResult("s", { usd: reported() });
    expect(proxy.meterOf("s").unreportedUsd).toBe(0);
  }, 120_000);
});
