/**
 * `npm run bench -- <name>` runs bench/<name>.ts (its default export `run()`); with no name it
 * lists the benchmarks. Each benchmark prints its headline figures as its last line,
 * `<name>: key=value …`. Benchmarks measure; they never assert.
 */
import { readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const available = readdirSync(here)
  .filter((f) => f.endsWith(".ts") && f !== "run.ts" && !f.endsWith(".test.ts"))
  .map((f) => f.slice(0, -3))
  .sort();

async function main(): Promise<void> {
  const names = process.argv.slice(2).filter((a) => !a.startsWith("-"));
  if (names.length === 0) {
    console.log(`usage: npm run bench -- <name>\nbenchmarks: ${available.join(", ")}`);
    return;
  }
  for (const name of names) {
    if (!available.includes(name)) {
      console.error(`no benchmark named ${name}; available: ${available.join(", ")}`);
      process.exitCode = 2;
      return;
    }
    const mod = (await import(pathToFileURL(path.join(here, `${name}.ts`)).href)) as { default?: () => Promise<void>; run?: () => Promise<void> };
    const run = mod.default ?? mod.run;
    if (!run) throw new Error(`bench/${name}.ts exports no run()`);
    await run();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
