import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readReviewFile } from "./read-review-file";

let dir: string;
let unixServer: Server;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "review-read-"));
});

afterAll(async () => {
  await new Promise<void>((resolve) => (unixServer ? unixServer.close(() => resolve()) : resolve()));
  await rm(dir, { recursive: true, force: true });
});

describe("readReviewFile", () => {
  it("reads a regular file, and reports a missing one as no text", async () => {
    await writeFile(path.join(dir, "a.txt"), "héllo\n");
    expect(await readReviewFile(path.join(dir, "a.txt"))).toEqual({ ok: true, text: "héllo\n" });
    expect(await readReviewFile(path.join(dir, "missing.txt"))).toEqual({ ok: true, text: null });
  });

  it("refuses a named pipe at once instead of waiting for a writer", async () => {
    const fifo = path.join(dir, "pipe");
    execFileSync("mkfifo", [fifo]);
    expect(await readReviewFile(fifo)).toEqual({ ok: false, problem: expect.stringContaining("named pipe (FIFO)") });
  });

  it("refuses a directory, a device, a socket and a symbolic link, each named", async () => {
    await mkdir(path.join(dir, "sub"));
    expect(await readReviewFile(path.join(dir, "sub"))).toMatchObject({
      ok: false,
      problem: expect.stringContaining("a directory"),
    });
    expect(await readReviewFile("/dev/zero")).toMatchObject({
      ok: false,
      problem: expect.stringContaining("a device"),
    });
    const socketPath = path.join(dir, "sock");
    unixServer = createServer();
    await new Promise<void>((resolve) => unixServer.listen(socketPath, resolve));
    expect(await readReviewFile(socketPath)).toMatchObject({ ok: false, problem: expect.stringContaining("a socket") });
    await writeFile(path.join(dir, "target.txt"), "x");
    await symlink(path.join(dir, "target.txt"), path.join(dir, "link.txt"));
    expect(await readReviewFile(path.join(dir, "link.txt"))).toMatchObject({
      ok: false,
      problem: expect.stringContaining("symbolic link"),
    });
  });

  it("refuses a file over the cap, and reads one exactly at it", async () => {
    await writeFile(path.join(dir, "big.txt"), "x".repeat(1025));
    expect(await readReviewFile(path.join(dir, "big.txt"), 1024)).toMatchObject({
      ok: false,
      problem: expect.stringContaining("too large to review"),
    });
    await writeFile(path.join(dir, "edge.txt"), "y".repeat(1024));
    expect(await readReviewFile(path.join(dir, "edge.txt"), 1024)).toEqual({ ok: true, text: "y".repeat(1024) });
    const large = "z".repeat(200 * 1024);
    await writeFile(path.join(dir, "chunks.txt"), large);
    expect(await readReviewFile(path.join(dir, "chunks.txt"))).toEqual({ ok: true, text: large });
  });
});
