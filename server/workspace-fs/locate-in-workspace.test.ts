import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { locateInWorkspace } from "./locate-in-workspace";

describe("locateInWorkspace", () => {
  let dir: string;
  let root: string;
  beforeAll(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), "conduit-locate-")));
    root = path.join(dir, "ws");
    await mkdir(path.join(root, "src"), { recursive: true });
    await writeFile(path.join(root, "src", "a.txt"), "a");
    await writeFile(path.join(dir, "secret.txt"), "secret");
    await symlink(path.join(dir, "secret.txt"), path.join(root, "escape.txt"));
    await symlink(dir, path.join(root, "up"));
    await symlink(path.join(root, "src"), path.join(root, "inside-link"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("accepts files inside, existing or not, relative or absolute", async () => {
    expect(await locateInWorkspace(root, "src/a.txt")).toEqual({ ok: true, path: path.join(root, "src", "a.txt") });
    expect(await locateInWorkspace(root, path.join(root, "new", "b.txt"))).toEqual({
      ok: true,
      path: path.join(root, "new", "b.txt"),
    });
    expect(await locateInWorkspace(root, "inside-link/a.txt")).toEqual({
      ok: true,
      path: path.join(root, "src", "a.txt"),
    });
  });

  it("refuses paths outside, through .. or through a symlink (file or directory)", async () => {
    for (const p of ["../secret.txt", "/etc/passwd", "escape.txt", "up/secret.txt", "up/new.txt", ""]) {
      expect(await locateInWorkspace(root, p)).toMatchObject({ ok: false });
    }
  });
});
