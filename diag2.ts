import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import { startCredentialProxy } from "@/server/sidecar/credential-proxy/credential-proxy";
import { chooseSandbox } from "@/server/sidecar/process/sandbox";
import { createSessionRunner } from "@/server/sidecar/session/session-runner";
import { startCliEnv } from "@/test/cli-env";
const cliEnv = await startCliEnv();
const { sandbox } = await chooseSandbox("bwrap", cliEnv.cliPath);
const proxy = await startCredentialProxy({ upstream: cliEnv.server.url, credential: { apiKey: "k" } });
const variants: Record<string, any> = {};
for (const [name, deps] of Object.entries({ plain: {}, proxy: { credentials: proxy }, bwrap: { sandbox }, both: { sandbox, credentials: proxy } })) {
  const runner = createSessionRunner({ sessionId: name, workspaceRoot: cliEnv.cwd, configDir: cliEnv.configDir, claudeSessionId: randomUUID(), resume: false, permissionMode: "default" },
    { cliPath: cliEnv.cliPath, baseEnv: cliEnv.env, decidePermission: async ({ request }) => ({ behavior: "allow", updatedInput: request.input as any }), config: { idleCullMs: 0, stallMs: 600000 }, ...deps });
  let resolve: (() => void) | undefined;
  runner.onDidEvent((e) => { if (e.type === "line" && e.message.type === "result") resolve?.(); });
  await runner.start();
  variants[name] = { runner, turn: async (t: string) => { const s = performance.now(); const p = new Promise<void>((r) => (resolve = r)); await runner.prompt({ uuid: randomUUID(), text: t }); await p; return performance.now() - s; }, times: [] as number[] };
  await variants[name].turn("warm up");
}
for (let i = 0; i < 20; i++) for (const name of Object.keys(variants)) variants[name].times.push(await variants[name].turn(`turn ${i}`));
for (const name of Object.keys(variants)) { const t = [...variants[name].times].sort((a, b) => a - b); console.log(name, "p50", t[10].toFixed(1), "p25", t[5].toFixed(1), "min", t[0].toFixed(1)); }
for (const name of Object.keys(variants)) await variants[name].runner.dispose();
await proxy.close(); await cliEnv.close();
