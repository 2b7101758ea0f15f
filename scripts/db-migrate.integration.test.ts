// The CLI as the lead's scripts and CI call it: output and exit codes.
import { execFile } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { copyMigrations, makeTempDir, projectRoot } from "../server/db/test-support";

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function cli(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--import", "tsx", path.join(projectRoot, "scripts/db-migrate.ts"), ...args],
      { cwd: projectRoot, env: { ...process.env, ...env }, timeout: 30_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

describe("scripts/db-migrate.ts", () => {
  let temp: ReturnType<typeof makeTempDir>;
  beforeEach(() => {
    temp = makeTempDir();
  });
  afterEach(() => temp.remove());

  it("deploys into DATABASE_URL, then reports it up to date", async () => {
    const env = { DATABASE_URL: `file:${path.join(temp.dir, "data/conduit.db")}` };

    const pending = await cli(["status"], env);
    expect(pending.code).toBe(1);
    expect(pending.stdout).toMatch(/pending\s+\d{14}_init/);

    const deploy = await cli(["deploy"], env);
    expect(deploy).toMatchObject({ code: 0, stderr: "" });
    expect(deploy.stdout).toMatch(/^Applied \d{14}_init\n(Applied \d{14}_\w+\n)*$/);
    const applied = deploy.stdout.trim().split("\n").length;

    const again = await cli(["deploy"], env);
    expect(again.stdout).toBe(`No pending migrations (${applied} applied)\n`);

    const status = await cli(["status"], env);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/applied\s+\d{14}_init/);
    expect(status.stdout).toContain("Database is up to date.");
  });

  it("exits 1 with the failing migration's name and the database error", async () => {
    const dir = copyMigrations("prisma/migrations", path.join(temp.dir, "migrations"));
    mkdirSync(path.join(dir, "29991231000000_broken"));
    writeFileSync(
      path.join(dir, "29991231000000_broken/migration.sql"),
      `CREATE TABLE "Extra" ("id" INTEGER);\nNOT SQL;\n`,
    );

    const run = await cli(["deploy", "--url", `file:${path.join(temp.dir, "x.db")}`, "--dir", dir]);

    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^Applied \d{14}_init\n(Applied \d{14}_\w+\n)*$/);
    expect(run.stdout).not.toContain("broken");
    expect(run.stderr).toMatch(/^migration 29991231000000_broken failed: .*syntax error/);
    expect(run.stderr).toContain("Nothing of 29991231000000_broken was kept");
  });

  it("checks that the PostgreSQL schema is in sync", async () => {
    const run = await cli(["sync-pg", "--check"]);
    expect(run).toMatchObject({ code: 0, stdout: "prisma/postgres/schema.prisma is up to date\n" });
  });
});
