/**
 * The part of `.gitignore` the file tree needs: which entries to mark (and skip in name
 * search). Patterns: comments, `!` negation, a trailing `/` (folders only), a leading or inner
 * `/` (anchored to the file's folder), `*`, `?`, `**`, `[…]`. Pure.
 */

interface Rule {
  regex: RegExp;
  negate: boolean;
  dirOnly: boolean;
}

/** The rules of one `.gitignore`, relative to the folder that holds it. */
export interface IgnoreRules {
  /** Folder of the `.gitignore`, workspace-relative (`""` for the root). */
  base: string;
  rules: Rule[];
}

function globToRegex(glob: string): string {
  let out = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === "*") {
      if (glob[i + 1] === "*") {
        const slashAfter = glob[i + 2] === "/";
        out += slashAfter ? "(?:.*/)?" : ".*";
        i += slashAfter ? 2 : 1;
      } else out += "[^/]*";
    } else if (c === "?") out += "[^/]";
    else if (c === "[") {
      const end = glob.indexOf("]", i + 1);
      if (end === -1) out += "\\[";
      else {
        out += `[${glob.slice(i + 1, end).replace(/^!/, "^").replace(/\\/g, "\\\\")}]`;
        i = end;
      }
    } else if (c === "\\" && i + 1 < glob.length) {
      out += glob[i + 1]!.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
      i += 1;
    } else out += c.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  }
  return out;
}

/** Parses the text of a `.gitignore` found in folder `base`. */
export function parseGitignore(base: string, text: string): IgnoreRules {
  const rules: Rule[] = [];
  for (const raw of text.split(/\r?\n/)) {
    let line = raw.replace(/(?<!\\)\s+$/, "");
    if (line === "" || line.startsWith("#")) continue;
    const negate = line.startsWith("!");
    if (negate) line = line.slice(1);
    const dirOnly = line.endsWith("/");
    if (dirOnly) line = line.slice(0, -1);
    if (line === "") continue;
    const anchored = line.includes("/");
    if (line.startsWith("/")) line = line.slice(1);
    const body = globToRegex(line);
    rules.push({ regex: new RegExp(anchored ? `^${body}$` : `(?:^|/)${body}$`), negate, dirOnly });
  }
  return { base, rules };
}

/**
 * Whether a workspace-relative path is ignored by the given files' rules (outer folders first;
 * a later match wins, as in git).
 */
export function isIgnored(relPath: string, isDir: boolean, files: readonly IgnoreRules[]): boolean {
  let ignored = false;
  for (const file of files) {
    const prefix = file.base === "" ? "" : `${file.base}/`;
    if (prefix !== "" && !relPath.startsWith(prefix)) continue;
    const local = relPath.slice(prefix.length);
    for (const rule of file.rules) {
      if (rule.dirOnly && !isDir) continue;
      if (rule.regex.test(local)) ignored = !rule.negate;
    }
  }
  return ignored;
}
