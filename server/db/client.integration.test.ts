import { spawn } from "node:child_process";
import { once } from "node:events";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { closeDb, createDb, getDb, type Db } from "./client";
import { deployMigrations } from "./migrations";
import { itOnBothProviders, makeTempDir } from "./test-support";

async function writeAndReadUser(db: Db): Promise<void> {
  const created = await db.user.create({ data: { email: "ada@example.com", name: "Ada", monthlyBudgetUsd: 12.5 } });
  const read = await db.user.findUnique({ where: { email: "ada@example.com" } });
  expect(read).toEqual(created);
  expect(read).toMatchObject({ name: "Ada", isAdmin: false, monthlyBudgetUsd: 12.5, passwordHash: null });
  expect(read?.createdAt).toBeInstanceOf(Date);
}

describe("SQLite client", () => {
  let temp: ReturnType<typeof makeTempDir>;
  let url: string;
  let db: Db | undefined;

  beforeEach(async () => {
    temp = makeTempDir();
    url = `file:${path.join(temp.dir, "conduit.db")}`;
    await deployMigrations({ url });
  });
  afterEach(async () => {
    await db?.$disconnect();
    db = undefined;
    temp.remove();
  });

  it("opens connections in WAL mode with a busy timeout and foreign keys on", async () => {
    db = createDb(url);
    const [journal] = await db.$queryRawUnsafe<{ journal_mode: string }[]>("PRAGMA journal_mode");
    const [busy] = await db.$queryRawUnsafe<{ timeout: bigint }[]>("PRAGMA busy_timeout");
    expect(journal?.journal_mode).toBe("wal");
    expect(Number(busy?.timeout)).toBeGreaterThanOrEqual(5_000);

    const user = await db.user.create({ data: { email: "a@example.com", name: "A" } });
    const workspace = await db.workspace.create({ data: { name: "W", slug: "w", rootPath: "/w" } });
    await db.membership.create({ data: { userId: user.id, workspaceId: workspace.id, role: "owner" } });
    await db.workspace.delete({ where: { id: workspace.id } });
    expect(await db.membership.count()).toBe(0);
  });

  it("keeps statements prepared without mixing up their arguments, rows or transactions", async () => {
    db = createDb(url);
    const client = db;
    const emails = Array.from({ length: 20 }, (_, i) => `u${i}@example.com`);
    // The same INSERT and SELECT texts, over and over, with different arguments.
    for (const email of emails) await client.user.create({ data: { email, name: email.slice(0, 3) } });
    for (const email of emails) {
      expect((await client.user.findUnique({ where: { email } }))?.name).toBe(email.slice(0, 3));
      const rows = await client.$queryRaw<{ email: string }[]>`SELECT "email" FROM "User" WHERE "email" = ${email}`;
      expect(rows).toEqual([{ email }]);
    }
    // A reader that ran in raw mode for the adapter still gives objects to the next caller.
    const [count] = await client.$queryRaw<{ n: number | bigint }[]>`SELECT COUNT(*) AS n FROM "User"`;
    expect(Number(count?.n)).toBe(20);
    // A failed transaction rolls back; the kept BEGIN/INSERT statements still work afterwards.
    await expect(
      client.$transaction(async (tx) => {
        await tx.user.create({ data: { email: "inside@example.com", name: "In" } });
        await tx.user.create({ data: { email: "u0@example.com", name: "Clash" } });
      }),
    ).rejects.toThrow();
    expect(await client.user.findUnique({ where: { email: "inside@example.com" } })).toBeNull();
    await client.$transaction(async (tx) => {
      await tx.user.create({ data: { email: "inside@example.com", name: "In" } });
    });
    expect(await client.user.count()).toBe(21);
  });

  it("a transaction that reads and then writes survives another process writing meanwhile", async () => {
    db = createDb(url);
    const client = db;
    // Another process (the sidecar, in production) commits a row every few milliseconds.
    const writer = spawn(
      process.execPath,
      [
        "-e",
        `const db = new (require("better-sqlite3"))(process.argv[1]); db.pragma("busy_timeout = 5000");
         const insert = db.prepare('INSERT INTO "AuditLog" ("id", "action", "objectType", "objectId") VALUES (?, ?, ?, ?)');
         let i = 0; process.stdout.write("ready\\n");
         setInterval(() => insert.run("w" + i++, "tick", "test", "x"), 5);`,
        path.join(temp.dir, "conduit.db"),
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    try {
      await once(writer.stdout!, "data");
      // Sign-up's shape: count, then insert, in one transaction. A deferred BEGIN failed about
      // half of these with SQLITE_BUSY_SNAPSHOT. Each transaction also counts the writer's rows:
      // the run goes on (up to a deadline) until the writer has committed between two of them,
      // so the test cannot pass without the writing it is about. Back to back, the immediate
      // transactions held the lock so tightly that under load the writer's busy handler never
      // got in (CI saw 0 ticks after 60); a few milliseconds apart, as sign-ups are, it does.
      const ticksSeen: number[] = [];
      const deadline = Date.now() + 20_000;
      let i = 0;
      while (i < 60 || (ticksSeen[0] === ticksSeen.at(-1) && Date.now() < deadline)) {
        const email = `r${i}@example.com`;
        await client.$transaction(async (tx) => {
          ticksSeen.push(await tx.auditLog.count({ where: { action: "tick" } }));
          await tx.user.count();
          await new Promise((resolve) => setTimeout(resolve, 3));
          await tx.user.create({ data: { email, name: "R" } });
        });
        i++;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      expect(await client.user.count()).toBe(i);
      expect(ticksSeen.at(-1)).toBeGreaterThan(ticksSeen[0]!);
    } finally {
      writer.kill();
    }
  });

  it("refuses a database file that does not exist, naming the fix", () => {
    expect(() => createDb(`file:${path.join(temp.dir, "missing.db")}`)).toThrow(/does not exist.*db:migrate/);
  });

  it("getDb keeps one client per DATABASE_URL", async () => {
    const saved = process.env.DATABASE_URL;
    process.env.DATABASE_URL = url;
    try {
      const first = getDb();
      expect(getDb()).toBe(first);
      expect(await first.user.count()).toBe(0);
      await closeDb();
      expect(getDb()).not.toBe(first);
    } finally {
      await closeDb();
      if (saved === undefined) delete process.env.DATABASE_URL;
      else process.env.DATABASE_URL = saved;
    }
  });
});

itOnBothProviders("client", "writes and reads a User", writeAndReadUser);
