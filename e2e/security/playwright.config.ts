/**
 * The security suite's browser and API checks, run by `npm run test:security`
 * (scripts/security-suite.ts), which starts the Conduit they attack and passes its URL, data
 * directory, checkout and canary secrets in CONDUIT_SECURITY_* variables.
 */
import { defineConfig } from "@playwright/test";
import base from "../../playwright.config";

const url = process.env.CONDUIT_SECURITY_URL;
if (!url) throw new Error("run the security suite with `npm run test:security` (CONDUIT_SECURITY_URL is unset)");

export default defineConfig({
  ...base,
  testDir: ".",
  testMatch: "*.spec.ts",
  testIgnore: [],
  outputDir: "../../test-results/security/output",
  timeout: 120_000,
  webServer: undefined,
  // the main suite's first-account admin is not wanted here: the matrix makes its own first account
  globalSetup: undefined,
  use: { ...base.use, baseURL: url },
});
