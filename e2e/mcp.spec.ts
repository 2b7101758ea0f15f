import { readFileSync } from "node:fs";
import path from "node:path";
import { expect, test, createWorkspace, sameOrigin, signedInPage, startSession, uniqueEmail } from "./fixtures";

// Issue 13 item 5: an owner adds MCP servers on the workspace page (a secret env value typed
// once, shown masked, never sent back); a new session's CLI starts them inside its sandbox and
// the session page shows their status rows; a viewer sees the configuration read-only.

/** A dependency-free stdio MCP server (newline-delimited JSON-RPC): one tool, `ping`; it exits unless PING_TOKEN arrived. */
/** A dependency-free stdio MCP server: one tool, `ping`; it exits unless PING_TOKEN arrived. */
const pingServer = readFileSync(path.join(import.meta.dirname, "..", "test", "mcp", "ping-mcp-server.mjs"), "utf8");

test("an owner adds MCP servers, a session shows their status, a viewer cannot edit", async ({ browser }) => {
  test.setTimeout(180_000);
  const stamp = Date.now().toString(36);
  const owner = await signedInPage(browser, uniqueEmail("mcp-owner"), `MCP owner ${stamp}`);
  const viewer = await signedInPage(browser, uniqueEmail("mcp-viewer"), `MCP viewer ${stamp}`);
  try {
    const ws = await createWorkspace(owner, `MCP ${stamp}`, { page: viewer, role: "viewer" });
    const made = await owner.request.post(`/api/workspaces/${ws.slug}/files`, { headers: sameOrigin, data: { path: "tools/ping-mcp.mjs", kind: "file", content: pingServer } });
    expect(made.status(), await made.text()).toBe(201);
    const info = await owner.request.get(`/api/workspaces/${ws.slug}`);
    const rootPath = ((await info.json()) as { data: { rootPath: string } }).data.rootPath;

    await owner.goto(`/w/${ws.slug}`);
    const panel = owner.getByTestId("workspace-mcp");
    await expect(panel.getByTestId("mcp-config-empty")).toBeVisible();

    // a stdio server with a secret environment variable, by the keyboard where it counts
    await owner.getByTestId("mcp-add").click();
    await owner.getByTestId("mcp-name").fill("ping");
    await owner.getByTestId("mcp-command").fill("/usr/bin/node");
    await owner.getByTestId("mcp-args").fill(`${rootPath}/tools/ping-mcp.mjs`);
    await owner.getByTestId("mcp-secret-add").click();
    await owner.getByTestId("mcp-secret-key").fill("PING_TOKEN");
    await owner.getByTestId("mcp-secret-value").fill("secret-ping-value-123");
    await expect(owner.getByTestId("mcp-secret-value")).toHaveAttribute("type", "password");
    await owner.getByTestId("mcp-secret-value").press("Enter");
    await expect(owner.getByTestId("mcp-saved")).toContainText("Saved ping");
    const row = panel.locator('[data-testid="mcp-config-row"][data-name="ping"]');
    await expect(row).toContainText("PING_TOKEN=••••••");
    await expect(row).not.toContainText("secret-ping-value-123");

    // a bad URL is refused with a clear error; then a broken command, saved
    await owner.getByTestId("mcp-add").click();
    await owner.getByTestId("mcp-name").fill("bad name!");
    await owner.getByTestId("mcp-command").fill("/nonexistent/mcp-server");
    await owner.getByTestId("mcp-name").evaluate((el: HTMLInputElement) => el.removeAttribute("pattern"));
    await owner.getByTestId("mcp-save").click();
    await expect(owner.getByTestId("mcp-error")).toContainText("name");
    await owner.getByTestId("mcp-name").fill("broken");
    await owner.getByTestId("mcp-save").click();
    await expect(panel.locator('[data-testid="mcp-config-row"][data-name="broken"]')).toBeVisible();

    // the API never returns the value
    const listed = await owner.request.get(`/api/workspaces/${ws.slug}/mcp`);
    expect(await listed.text()).not.toContain("secret-ping-value-123");

    // editing keeps the value: the session below still gets it (the server refuses to start without it)
    await row.getByTestId("mcp-edit").click();
    await expect(owner.getByTestId("mcp-secret-value")).toHaveValue("");
    await expect(owner.getByTestId("mcp-secret-value")).toHaveAttribute("placeholder", /unchanged/);
    await owner.getByTestId("mcp-save").click();
    await expect(owner.getByTestId("mcp-saved")).toContainText("Saved ping");

    // a new session: its CLI reports both servers
    await startSession(owner);
    const status = owner.getByTestId("session-mcp");
    await expect(status).toBeVisible({ timeout: 30_000 });
    await expect(status.locator('[data-testid="mcp-server-row"][data-name="ping"]')).toHaveAttribute("data-status", "connected", { timeout: 30_000 });
    await expect(status.locator('[data-testid="mcp-server-row"][data-name="broken"]')).toHaveAttribute("data-status", "failed");
    await expect(status.locator('[data-testid="mcp-server-row"][data-name="broken"] [data-testid="mcp-server-error"]')).not.toBeEmpty();
    await expect(status).toContainText("ping");
    await status.getByTestId("mcp-status-refresh").click();
    await expect(status.locator('[data-testid="mcp-server-row"][data-name="ping"]')).toHaveAttribute("data-status", "connected");
    const sessionUrl = owner.url();

    // the viewer: the configuration read-only, the API refuses, the session's status visible
    await viewer.goto(`/w/${ws.slug}`);
    const viewerPanel = viewer.getByTestId("workspace-mcp");
    await expect(viewerPanel.locator('[data-testid="mcp-config-row"]')).toHaveCount(2);
    await expect(viewerPanel.getByTestId("mcp-read-only")).toBeVisible();
    await expect(viewerPanel.getByTestId("mcp-add")).toHaveCount(0);
    await expect(viewerPanel.getByTestId("mcp-edit")).toHaveCount(0);
    await expect(viewerPanel.getByTestId("mcp-delete")).toHaveCount(0);
    const refused = await viewer.request.post(`/api/workspaces/${ws.slug}/mcp`, { headers: sameOrigin, data: { transport: "http", name: "sneaky", url: "https://example.com/mcp" } });
    expect(refused.status()).toBe(403);
    await viewer.goto(sessionUrl);
    await expect(viewer.locator('[data-testid="mcp-server-row"][data-name="ping"]')).toHaveAttribute("data-status", "connected", { timeout: 30_000 });

    // delete, confirmed
    await owner.goto(`/w/${ws.slug}`);
    const broken = panel.locator('[data-testid="mcp-config-row"][data-name="broken"]');
    await broken.getByTestId("mcp-delete").click();
    await broken.getByTestId("mcp-delete-confirm").click();
    await expect(broken).toHaveCount(0);
    await owner.reload();
    await expect(panel.locator('[data-testid="mcp-config-row"]')).toHaveCount(1);
  } finally {
    await owner.context().close();
    await viewer.context().close();
  }
});
