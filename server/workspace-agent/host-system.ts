/**
 * What a bubblewrap sandbox is built from on this host: where a program is on PATH, and which
 * top-level system entries exist (and how to show them). Used by the workspace door and by the
 * sidecar's session sandbox (`server/sidecar/process/sandbox.ts`).
 */
import { accessSync, constants, lstatSync, readlinkSync, realpathSync } from "node:fs";
import path from "node:path";

/** One top-level system entry as found on the host. */
export type SystemEntry =
  | { path: string; kind: "dir" | "file" }
  /** A symlink such as `/bin -> usr/bin` on merged-/usr systems: recreated, not bound. */
  | { path: string; kind: "symlink"; target: string };

/** The executable named `name` on PATH, or undefined. */
export function findOnPath(name: string, pathVariable = process.env.PATH ?? ""): string | undefined {
  for (const dir of pathVariable.split(path.delimiter)) {
    if (dir === "" || !path.isAbsolute(dir)) continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** The entries among `dirs` and `/etc/<etcNames>` that exist on this host, as bwrap should show them. */
export function inspectSystem(dirs: readonly string[], etcNames: readonly string[]): SystemEntry[] {
  const entries: SystemEntry[] = [];
  const add = (at: string) => {
    try {
      const stat = lstatSync(at);
      if (stat.isSymbolicLink()) {
        const target = readlinkSync(at);
        // A top-level link that stays inside the shown tree (`/bin -> usr/bin`) is recreated;
        // any other link is bound by what it leads to.
        if (at.split("/").length === 2 && !path.isAbsolute(target) && !target.includes("..")) {
          entries.push({ path: at, kind: "symlink", target });
        } else {
          const real = lstatSync(realpathSync(at));
          entries.push({ path: at, kind: real.isDirectory() ? "dir" : "file" });
        }
      } else if (stat.isDirectory() || stat.isFile()) {
        entries.push({ path: at, kind: stat.isDirectory() ? "dir" : "file" });
      }
    } catch {
      // absent on this host (or a dangling link): not shown
    }
  };
  for (const dir of dirs) add(dir);
  for (const name of etcNames) add(path.join("/etc", name));
  return entries;
}
