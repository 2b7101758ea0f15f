import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

/**
 * npm 12 (the registry's `latest`) skips every dependency's install script that `allowScripts` in
 * package.json does not name, with a warning at the end of the install: better-sqlite3 is then
 * not built and the CLI's platform binary not linked, and the README's `npm install && npm start`
 * fails on its first database call. npm 11 runs them and only warns. So every package the
 * lockfile marks as having an install script is named here, and nothing else is.
 */
const root = path.resolve(import.meta.dirname, "..");
const lock = JSON.parse(readFileSync(path.join(root, "package-lock.json"), "utf8")) as {
  packages: Record<string, { version?: string; hasInstallScript?: boolean }>;
};
const manifest = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as { allowScripts?: Record<string, boolean> };

/** `node_modules/a/node_modules/@b/c` → `@b/c`. */
function packageName(lockPath: string): string {
  return lockPath.slice(lockPath.lastIndexOf("node_modules/") + "node_modules/".length);
}

/** The allowScripts entry that decides for `name@version`: a pinned key first, then the name. */
function allowed(name: string, version: string | undefined): boolean | undefined {
  const allow = manifest.allowScripts ?? {};
  return (version !== undefined ? allow[`${name}@${version}`] : undefined) ?? allow[name];
}

describe("install scripts", () => {
  const withScripts = Object.entries(lock.packages)
    .filter(([lockPath, entry]) => lockPath !== "" && entry.hasInstallScript === true)
    .map(([lockPath, entry]) => ({ name: packageName(lockPath), version: entry.version }));

  it("finds the dependencies that need theirs (native builds, the CLI's binary)", () => {
    expect(withScripts.map((p) => p.name)).toEqual(expect.arrayContaining(["better-sqlite3", "argon2", "@anthropic-ai/claude-code"]));
  });

  it("allows every dependency's install script that the lockfile records", () => {
    const blocked = withScripts.filter((p) => allowed(p.name, p.version) !== true).map((p) => `${p.name}@${p.version}`);
    expect(blocked, "add them to allowScripts in package.json (`npm install-scripts approve <pkg>`)").toEqual([]);
  });

  it("allows nothing that is not installed", () => {
    const installed = new Set(withScripts.map((p) => p.name));
    const stale = Object.keys(manifest.allowScripts ?? {}).filter((key) => !installed.has(key.replace(/(?<=.)@[^@]*$/, "")));
    expect(stale).toEqual([]);
  });
});
