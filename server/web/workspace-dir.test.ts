import { mkdir, mkdtemp, realpath, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DIRECTORY_NOT_AVAILABLE, pathsOverlap, resolveWorkspaceDir, slugify } from "./workspaces";

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

  it("creates one new directory under the root, 0700", async () => {
    const dir = await resolveWorkspaceDir(root, "team-a_1.0");
    expect(dir).toBe(path.join(root, "team-a_1.0"));
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
  });

  it.each(["../x", "a/b", "a/../../x", "/etc", ".", "..", "", ".hidden", "a\\b", "a b", "é", "a\0b", "x".repeat(65)])(
    "refuses %j as not one plain name",
    async (dir) => {
      await expect(resolveWorkspaceDir(root, dir)).rejects.toMatchObject({ code: "invalid_payload" });
    },
  );

  it("gives the same answer for every taken name: a directory, a file, a symlink (outside or not), a workspace", async () => {
    await mkdir(path.join(root, "dir"));
    await writeFile(path.join(root, "file"), "");
    await symlink(outside, path.join(root, "link-out"));
    await symlink(path.join(root, "dir"), path.join(root, "link-in"));
    for (const name of ["dir", "file", "link-out", "link-in", "taken"]) {
      const refusal = await resolveWorkspaceDir(root, name, [path.join(root, "taken")]).catch((error: unknown) => error);
      expect(refusal, name).toMatchObject({ code: "conflict", message: DIRECTORY_NOT_AVAILABLE });
    }
  });

  it("refuses a workspace inside or above another, before creating anything", async () => {
    // Rows from before the one-segment rule: a workspace at the root itself, or nested.
    await expect(resolveWorkspaceDir(root, "new", [root])).rejects.toMatchObject({ message: DIRECTORY_NOT_AVAILABLE });
    await expect(resolveWorkspaceDir(root, "a", [path.join(root, "a", "src")])).rejects.toMatchObject({ message: DIRECTORY_NOT_AVAILABLE });
    await expect(stat(path.join(root, "new"))).rejects.toThrow();
    await expect(stat(path.join(root, "a"))).rejects.toThrow();
    // A sibling whose name starts the same is not inside.
    expect(await resolveWorkspaceDir(root, "alice2", [path.join(root, "alice")])).toBe(path.join(root, "alice2"));
  });
});

describe("pathsOverlap", () => {
  it("is true for the same path and for nesting either way, false for siblings", () => {
    expect(pathsOverlap("/ws/a", "/ws/a")).toBe(true);
    expect(pathsOverlap("/ws/a", "/ws/a/src")).toBe(true);
    expect(pathsOverlap("/ws/a/src", "/ws/a")).toBe(true);
    expect(pathsOverlap("/ws/alice", "/ws/alice2")).toBe(false);
  });
});

describe("slugify", () => {
  it("makes URL-safe names", () => {
    expect(slugify("My Project!")).toBe("my-project");
    expect(slugify("Ünïcode ☃")).toBe("unicode");
    expect(slugify("!!!")).toBe("workspace");
  });
});
