import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { workspaceDoor } from "@/server/workspace-agent";
import { resumabilityOf } from "./session-resume";

let dataDir: string;
let outside: string;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), "conduit-resume-"));
  outside = await mkdtemp(path.join(os.tmpdir(), "conduit-resume-outside-"));
});
afterAll(async () => {
  workspaceDoor().close();
  await rm(dataDir, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
});

const session = (workspaceId: string, claudeSessionId: string) => ({ id: "s1", workspaceId, claudeSessionId });

describe("resumability (through the config directory's door)", () => {
  it("needs a finished turn", async () => {
    expect((await resumabilityOf(session("w0", "c0"), false, dataDir)).resumable).toBe(false);
  });

  it("is false without a config directory, true with the transcript in a project folder", async () => {
    expect(await resumabilityOf(session("w1", "conv-1"), true, dataDir)).toMatchObject({ resumable: false, reason: expect.stringContaining("gone") });
    const project = path.join(dataDir, "claude-config", "w1", "projects", "-srv-ws-w1");
    await mkdir(project, { recursive: true });
    await writeFile(path.join(project, "conv-1.jsonl"), "{}\n");
    expect(await resumabilityOf(session("w1", "conv-1"), true, dataDir)).toEqual({ resumable: true });
  });

  it("does not count a project folder that is a link to elsewhere", async () => {
    await writeFile(path.join(outside, "conv-2.jsonl"), "{}\n");
    const projects = path.join(dataDir, "claude-config", "w2", "projects");
    await mkdir(projects, { recursive: true });
    await symlink(outside, path.join(projects, "linked"));
    expect((await resumabilityOf(session("w2", "conv-2"), true, dataDir)).resumable).toBe(false);
  });
});
