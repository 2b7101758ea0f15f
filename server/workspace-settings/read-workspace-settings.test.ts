import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { reviewWorkspaceSettingsAt, settingsStillTrusted } from "./read-workspace-settings";

let root: string;
beforeEach(() => {
  root = mkdtempSync(path.join(os.tmpdir(), "conduit-trust-"));
  mkdirSync(path.join(root, ".claude"));
  writeFileSync(path.join(root, ".claude", "settings.local.json"), JSON.stringify({ permissions: { allow: ["Bash"] } }));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe("settingsStillTrusted", () => {
  it("holds while the files are exactly the trusted ones", async () => {
    const { digest } = await reviewWorkspaceSettingsAt(root);
    expect(await settingsStillTrusted(root, digest)).toBe(true);
    expect(await settingsStillTrusted(root, null)).toBe(false);
  });

  it("ends with any change: an edit, a new file, a removed file", async () => {
    const { digest } = await reviewWorkspaceSettingsAt(root);
    writeFileSync(path.join(root, ".claude", "settings.local.json"), JSON.stringify({ permissions: { allow: ["Bash", "Write"] } }));
    expect(await settingsStillTrusted(root, digest)).toBe(false);

    const second = (await reviewWorkspaceSettingsAt(root)).digest;
    writeFileSync(path.join(root, ".mcp.json"), "{}");
    expect(await settingsStillTrusted(root, second)).toBe(false);

    const third = (await reviewWorkspaceSettingsAt(root)).digest;
    rmSync(path.join(root, ".mcp.json"));
    expect(await settingsStillTrusted(root, third)).toBe(false);
  });

  it("never trusts a file that cannot be read as a regular file inside the workspace", async () => {
    const outside = mkdtempSync(path.join(os.tmpdir(), "conduit-outside-"));
    try {
      writeFileSync(path.join(outside, "settings.json"), "{}");
      symlinkSync(path.join(outside, "settings.json"), path.join(root, ".claude", "settings.json"));
      const review = await reviewWorkspaceSettingsAt(root);
      expect(review.files.find((f) => f.file === ".claude/settings.json")?.problem).toMatch(/symlink/);
      expect(await settingsStillTrusted(root, review.digest)).toBe(false);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });
});
