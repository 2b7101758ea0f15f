/**
 * Whether sign-in's timing tells which emails have accounts (issue 38, defect 4). The email and
 * password check the sign-in runs (server/web/credential-check.ts: the account read, then one
 * argon2id verification, against a dummy hash when the email is unknown) is timed for an unknown
 * email and for a known email with a wrong password, side by side in one run: the two kinds
 * alternate, so load on the machine falls on both alike. The figure is each kind's median after a
 * warm-up; the ratio known/unknown should be close to 1 (before the dummy hash it was about 15).
 * For reference, the old unknown-email path (the account read alone) is timed too.
 *
 * Last line: `signin-timing: unknown_ms=<n> known_wrong_ms=<n> ratio=<n>`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { createDb, type Db } from "../server/db/client";
import { deployMigrations } from "../server/db/migrations";
import { checkCredentials, dummyPasswordHash } from "../server/web/credential-check";
import { hashPassword } from "../server/web/passwords";

const RUNS = Number(process.env.BENCH_SIGNIN_RUNS ?? 15);
const WARMUP = 2;

function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

export default async function run(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "conduit-bench-signin-"));
  const file = path.join(dir, "conduit.db");
  let db: Db | undefined;
  try {
    await deployMigrations({ url: `file:${file}` });
    db = createDb(`file:${file}`);
    const known = "known@example.test";
    await db.user.create({ data: { email: known, name: "Known", passwordHash: await hashPassword("the-right-password-42") } });
    await dummyPasswordHash();

    const unknown: number[] = [];
    const knownWrong: number[] = [];
    const readOnly: number[] = [];
    for (let i = 0; i < WARMUP + RUNS; i++) {
      // alternating, each kind first in turn
      const pair = [
        () => timed(() => checkCredentials(db!, `nobody-${i}@example.test`, "a-wrong-password-1")),
        () => timed(() => checkCredentials(db!, known, `a-wrong-password-${i}`)),
      ] as const;
      const took: [number, number] = [0, 0];
      for (const k of i % 2 === 0 ? [0, 1] : [1, 0]) took[k] = await pair[k]!();
      const read = await timed(() => db!.user.findUnique({ where: { email: `nobody-${i}@example.test` } }));
      if (i < WARMUP) continue;
      unknown.push(took[0]);
      knownWrong.push(took[1]);
      readOnly.push(read);
    }
    const u = median(unknown);
    const k = median(knownWrong);
    console.log(`runs ${RUNS} each; unknown email ${u.toFixed(1)} ms (min ${Math.min(...unknown).toFixed(1)}, max ${Math.max(...unknown).toFixed(1)})`);
    console.log(`known email, wrong password ${k.toFixed(1)} ms (min ${Math.min(...knownWrong).toFixed(1)}, max ${Math.max(...knownWrong).toFixed(1)})`);
    console.log(`old unknown-email path (account read only, no verification) ${median(readOnly).toFixed(2)} ms`);
    console.log(`signin-timing: unknown_ms=${u.toFixed(1)} known_wrong_ms=${k.toFixed(1)} ratio=${(k / u).toFixed(2)}`);
  } finally {
    await db?.$disconnect();
    rmSync(dir, { recursive: true, force: true });
  }
}
