/**
 * A workspace's `.git/config` is written by whoever (or whatever session) works in it, and git
 * runs commands named there: clean/smudge filters on `add` and `status`, textconv and external
 * diff drivers on `diff`, custom merge drivers on `merge`. Conduit runs git in its own process,
 * so every such key found is overridden with an empty command on the command line (git treats
 * an empty filter or textconv as none), and a custom merge driver refuses the merge outright.
 * Pure: the keys are read by the caller.
 */

/** Keys whose value git runs as a command, by their last segment under a section with a name. */
const commandKeys: Readonly<Record<string, ReadonlySet<string>>> = {
  filter: new Set(["clean", "smudge", "process"]),
  diff: new Set(["textconv", "command"]),
};

/** `-c` settings that void every command-running key among `keys` (lower-cased names from `git config --name-only`). */
export function guardOverrides(keys: readonly string[]): string[] {
  const out = new Set<string>();
  for (const key of keys) {
    const first = key.indexOf(".");
    const last = key.lastIndexOf(".");
    if (first < 0 || last === first) continue;
    const section = key.slice(0, first).toLowerCase();
    const leaf = key.slice(last + 1).toLowerCase();
    if (commandKeys[section]?.has(leaf)) {
      out.add(`${key}=`);
      // a required filter with no command would fail every add: make it optional
      if (section === "filter") out.add(`${key.slice(0, last)}.required=false`);
    }
  }
  return [...out];
}

/** Whether the config names a custom merge driver (a command git would run during a merge). */
export function hasCustomMergeDriver(keys: readonly string[]): boolean {
  return keys.some((k) => /^merge\..+\.driver$/i.test(k));
}
