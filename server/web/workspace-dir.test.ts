import { mkdtemp, realpath, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { resolveWorkspaceDir, slugify } from "./workspaces";

describe("resolveWorkspaceDir", () => {
  let root: string;
  let outside: string;

  beforeEach(async () => {
    root = await realpath(await mkdtemp(path.join(tmpdir(), "conduit-root-")));
    outside = await realpath(await mkdtemp(path.join(tmpdir(), "conduit-outside-")));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
    await rm(outside, { recursive: true, force: true });
  });

  it("creates a missing directory inside the root", async () => {
    expect(await resolveWorkspaceDir(root, "a/b")).toBe(path.join(root, "a", "b"));
  });

  it.each(["../x", "a/../../x", "/etc", ".", ""])("refuses %j", async (dir) => {
    await expect(resolveWorkspaceDir(root, dir)).rejects.toMatchObject({ code: "invalid_payload" });
  });

  it("refuses a symlink that leads outside the root", async () => {
    await symlink(outside, path.join(root, "link"));
    await expect(resolveWorkspaceDir(root, "link")).rejects.toMatchObject({ code: "invalid_payload" });
    await expect(resolveWorkspaceDir(root, "link/sub")).rejects.toMatchObject({ code: "invalid_payload" });
  });
});

describe("slugify", () => {
  it("makes URL-safe names", () => {
    expect(slugify("My Project!")).toBe("my-project");
    expect(slugify("Ünïcode ☃")).toBe("unicode");
    expect(slugify("!!!")).toBe("workspace");
  });
});
