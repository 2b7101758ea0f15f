import { realpath } from "node:fs/promises";
import path from "node:path";

/**
 * Resolves a path the CLI named to a real path inside the workspace root: the file itself when
 * it exists, else its nearest existing ancestor must resolve inside (no symlink escape).
 */
export async function locateInWorkspace(
  rootPath: string,
  filePath: string,
): Promise<{ ok: true; path: string } | { ok: false; problem: string }> {
  if (filePath === "") return { ok: false, problem: "The request names no file." };
  const outside = { ok: false as const, problem: "The file is outside the workspace; Conduit does not show it." };
  let root: string;
  try {
    root = await realpath(rootPath);
  } catch {
    return { ok: false, problem: "The workspace directory is missing." };
  }
  const absolute = path.resolve(root, filePath);
  let probe = absolute;
  let rest = "";
  for (;;) {
    try {
      const real = await realpath(probe);
      const resolved = rest === "" ? real : path.join(real, rest);
      return isInside(root, resolved) ? { ok: true, path: resolved } : outside;
    } catch {
      const parent = path.dirname(probe);
      if (parent === probe) return outside;
      rest = rest === "" ? path.basename(probe) : path.join(path.basename(probe), rest);
      probe = parent;
    }
  }
}

function isInside(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate);
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative));
}
