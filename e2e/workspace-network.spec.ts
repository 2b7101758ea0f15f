import { expect, test, createWorkspace, sameOrigin, signedInPage, signInViaUi, startSession, uniqueEmail } from "./fixtures";
import { e2eAdmin } from "./global-setup";

// Issue 11: an owner narrows the workspace's network in its panel; bad domains get a clear
// error, the change is audited and shown in the session header; an editor sees it read-only.
test("an owner narrows the network to an allow-list; an editor sees it read-only; sessions show it", async ({ browser }) => {
  test.setTimeout(120_000);
  const stamp = Date.now().toString(36);
  const owner = await signedInPage(browser, uniqueEmail("net-owner"), `Net owner ${stamp}`);
  const editor = await signedInPage(browser, uniqueEmail("net-editor"), `Net editor ${stamp}`);
  try {
    const ws = await createWorkspace(owner, `Network ${stamp}`, { page: editor, role: "editor" });
    await owner.goto(`/w/${ws.slug}`);
    const panel = owner.getByTestId("workspace-network");
    await expect(panel).toHaveAttribute("data-mode", "open");
    await expect(panel).toContainText("applies to sessions started or restarted after it");

    // A bad entry: refused, with the entry named; nothing saved.
    await owner.getByTestId("workspace-network-policy").selectOption("allowlist");
    await owner.getByTestId("workspace-network-domains").fill("registry.npmjs.org\n10.0.0.1");
    await owner.getByTestId("workspace-network-save").click();
    await expect(owner.getByTestId("workspace-network-error")).toContainText('"10.0.0.1" is an IP address');
    await expect(panel).toHaveAttribute("data-mode", "open");

    // Fixed with the keyboard: saved and normalized.
    await owner.getByTestId("workspace-network-domains").fill("Registry.npmjs.org\n\n*.github.com");
    await owner.getByTestId("workspace-network-save").focus();
    await owner.keyboard.press("Enter");
    await expect(owner.getByTestId("workspace-network-saved")).toBeVisible();
    await expect(panel).toHaveAttribute("data-mode", "allowlist");
    await expect(owner.getByTestId("workspace-network-domains")).toHaveValue("registry.npmjs.org\n*.github.com");
    await owner.reload();
    await expect(owner.getByTestId("workspace-network-domains")).toHaveValue("registry.npmjs.org\n*.github.com");

    // The editor: read-only, and the API refuses a change.
    await editor.goto(`/w/${ws.slug}`);
    await expect(editor.getByTestId("workspace-network-policy")).toBeDisabled();
    await expect(editor.getByTestId("workspace-network-policy")).toHaveValue("allowlist");
    await expect(editor.getByTestId("workspace-network-domains")).toHaveAttribute("readonly", "");
    await expect(editor.getByTestId("workspace-network-save")).toHaveCount(0);
    const refused = await editor.request.put(`/api/workspaces/${ws.slug}/network`, { headers: sameOrigin, data: { mode: "open" } });
    expect(refused.status()).toBe(403);

    // The session header shows the policy.
    await owner.goto(`/w/${ws.slug}`);
    await startSession(owner);
    await expect(owner.getByTestId("session-network")).toHaveText("network: 2 domains");
    await expect(owner.getByTestId("session-network")).toHaveAttribute("title", /registry\.npmjs\.org, \*\.github\.com/);

    // Audited, with the old and the new policy.
    const admin = await browser.newPage();
    try {
      await signInViaUi(admin, e2eAdmin.email, e2eAdmin.password);
      const audit = await admin.request.get(`/api/admin/audit?workspace=${ws.slug}&action=workspace.network`, { headers: sameOrigin });
      expect(audit.status(), await audit.text()).toBe(200);
      const rows = ((await audit.json()) as { data: { rows: { action: string; details: string | null }[] } }).data.rows;
      expect(rows).toHaveLength(1);
      expect(JSON.parse(rows[0]!.details!)).toEqual({
        from: { mode: "open", domains: [] },
        to: { mode: "allowlist", domains: ["registry.npmjs.org", "*.github.com"] },
      });
    } finally {
      await admin.context().close();
    }
  } finally {
    await owner.context().close();
    await editor.context().close();
  }
});
