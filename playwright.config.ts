import { defineConfig, devices } from "@playwright/test";

const port = Number(process.env.CONDUIT_E2E_PORT ?? 3300);
const baseURL = `http://127.0.0.1:${port}`;
// `npm run test:e2e:deno` runs the live-session specs again with the edge under Deno.
const edgeRuntime = process.env.CONDUIT_EDGE_RUNTIME === "deno" ? "deno" : "node";

export default defineConfig({
  testDir: "e2e",
  // the security suite attacks its own Conduit (npm run test:security)
  testIgnore: "security/**",
  timeout: 60_000,
  expect: { timeout: 10_000 },
  fullyParallel: false,
  workers: 1,
  retries: 0,
  reporter: [["list"]],
  // After the web server is up: the instance's first account, its admin (e2e/global-setup.ts).
  globalSetup: "./e2e/global-setup.ts",
  outputDir: edgeRuntime === "deno" ? "test-results/e2e-deno" : "test-results/e2e",
  use: {
    baseURL,
    ...devices["Desktop Chrome"],
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-quic",
      ],
    },
  },
  webServer: {
    // A whole Conduit (edge, web, sidecar, demo model) on its own ports and a fresh data dir.
    command: "rm -rf test-results/e2e-data && node --import tsx scripts/start.ts",
    url: `${baseURL}/api/health`,
    timeout: 300_000,
    reuseExistingServer: false,
    stdout: "pipe",
    stderr: "pipe",
    gracefulShutdown: { signal: "SIGTERM", timeout: 10_000 },
    env: {
      PORT: String(port),
      CONDUIT_NEXT_PORT: String(port + 1),
      CONDUIT_SIDECAR_PORT: String(port + 2),
      CONDUIT_MODEL_PORT: String(port + 3),
      CONDUIT_DATA_DIR: "test-results/e2e-data",
      CONDUIT_PUBLIC_URL: baseURL,
      ANTHROPIC_API_KEY: "",
      DATABASE_URL: "",
      LOG_LEVEL: "warn",
      // the tests sign in more often than the per-address login limit allows
      CONDUIT_EDGE_RATE_LIMIT: "off",
      // the fixtures sign up freely; the invite and closed policies run their own instances
      CONDUIT_SIGNUP: "open",
      // one server for every spec: more sessions stay live than one team keeps (idle ones are culled
      // only after CONDUIT_IDLE_CULL_SEC); the default cap of 20 refused the last specs' sessions
      CONDUIT_SESSION_MAX: "60",
      // the fixtures' few accounts start many sessions in one workspace: the fair-share caps per
      // user and per workspace (5 and 10 by default) would refuse the later specs' sessions
      CONDUIT_SESSION_MAX_PER_USER: "60",
      CONDUIT_SESSION_MAX_PER_WORKSPACE: "60",
      CONDUIT_EDGE_RUNTIME: edgeRuntime,
    },
  },
});
