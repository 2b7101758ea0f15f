// Runs once, after the web server is up and before any spec: creates the e2e instance's first
// account, which becomes its administrator. Specs that need an admin sign in as `e2eAdmin`;
// every other fixture user is an ordinary account, whatever order the specs run in.
import { request, type FullConfig } from "@playwright/test";

/** The instance administrator of the e2e server (password: the fixtures' `password`). */
export const e2eAdmin = { email: "admin@conduit-e2e.test", name: "E2E Admin", password: "correct-horse-42" } as const;

export default async function globalSetup(config: FullConfig): Promise<void> {
  const baseURL = config.projects[0]?.use.baseURL;
  if (!baseURL) throw new Error("playwright.config.ts sets no baseURL");
  const api = await request.newContext({ baseURL, extraHTTPHeaders: { origin: new URL(baseURL).origin } });
  try {
    const res = await api.post("/api/signup", { data: e2eAdmin });
    // 201: created as the first account. Anything else means the data directory was not fresh
    // or sign-up changed: the admin specs would test the wrong thing, so stop here.
    if (res.status() !== 201) throw new Error(`creating the e2e admin failed: ${res.status()} ${await res.text()}`);
    const body = (await res.json()) as { data?: { isAdmin?: boolean } };
    if (body.data?.isAdmin === false)
      throw new Error(`the e2e admin is not the instance's first account: ${JSON.stringify(body)}`);
  } finally {
    await api.dispose();
  }
}
