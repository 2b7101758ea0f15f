/**
 * A hostile repository, as a session writes it (a shell script run in the session): a committed
 * baseline, then a `.git/config`, attributes files, an include and hooks naming a driver of every
 * kind git runs (filters, textconv, external diff, merge driver, fsmonitor, ssh, pager, editor,
 * gpg, credential helper, hooks), each one the same script: it leaves a mark in `markerDirs`
 * (host paths outside the workspace), prints the `canaries` it can read (files outside), then
 * does its job; then changes to every file for the routes to look at.
 */
import { sh } from "./door-support";

export interface HostileRepo {
  /** The workspace's directory (the repository's top level). */
  root: string;
  /** Where a driver that runs leaves its mark (absolute paths outside the workspace). */
  markerDirs: readonly string[];
  /** Files outside the workspace a driver prints when it can read them. */
  canaries: readonly string[];
}

/** The driver every config key names: a mark outside, the canaries it can read, then its job. */
function hostileDriver({ root, markerDirs, canaries }: HostileRepo): string {
  return [
    "#!/bin/sh",
    "# a hostile driver: leaves a mark outside the workspace, prints what it can read there, then does its job",
    'name="$1"; [ $# -gt 0 ] && shift',
    `for m in ${markerDirs.map(sh).join(" ")}; do mkdir -p "$m" 2>/dev/null; echo "$name uid=$(id -u)" >> "$m/$name" 2>/dev/null; done`,
    // where it ran at all (inside the door or not): informational, inside the repository
    `mkdir -p ${sh(`${root}/.git/door-ran`)} 2>/dev/null; echo x >> ${sh(`${root}/.git/door-ran`)}/"$name" 2>/dev/null`,
    `for c in ${canaries.map(sh).join(" ")}; do cat "$c" 2>/dev/null; done`,
    'case "$name" in',
    "  clean*|smudge*) cat ;;",
    '  textconv*) cat "$1" ;;',
    "  gpg*) cat > /dev/null; exit 1 ;;",
    "esac",
    "exit 0",
    "",
  ].join("\n");
}

export const hookNames = [
  "pre-commit",
  "prepare-commit-msg",
  "commit-msg",
  "post-commit",
  "post-checkout",
  "post-merge",
  "pre-merge-commit",
  "pre-rebase",
  "post-rewrite",
  "reference-transaction",
  "post-index-change",
  "pre-auto-gc",
  "fsmonitor-watchman",
  "pre-push",
];

/** Files of the hostile repository, each under an attribute naming one kind of driver. */
export const hostileFiles = ["a.txt", "b.txt", "c.md", "d.dat", "e.inc", "f.cfg", "g.more", "m.txt"];

/** The session's script: a committed baseline, then the hostile config, hooks and attributes, then changes. */
export function hostileRepoScript(repo: HostileRepo): string {
  const { root } = repo;
  const evil = `${root}/.git/evil.sh`;
  const d = (name: string) => `sh ${evil} ${name}`;
  const config = `[core]
	repositoryformatversion = 0
	filemode = true
	bare = false
	logallrefupdates = true
	fsmonitor = ${root}/.git/fsmonitor-hook
	sshCommand = ${d("ssh")}
	pager = ${d("pager")}
	editor = ${d("editor")}
	askPass = ${d("askpass")}
	hooksPath = ${root}/.githooks
	attributesFile = ${root}/.git/more-attributes
	alternateRefsCommand = ${d("alternate-refs")}
[include]
	path = ${root}/.git/extra.config
[filter "evil"]
	clean = ${d("clean")}
	smudge = ${d("smudge")}
	required = true
[filter "evilproc"]
	process = ${d("process")}
[diff "evil"]
	textconv = ${d("textconv")}
[diff "evilcmd"]
	command = ${d("diff-command")}
[diff]
	external = ${d("diff-external")}
[merge "evil"]
	name = evil
	driver = ${d("merge")} %O %A %B %L %P
[commit]
	gpgSign = true
[gpg]
	program = ${d("gpg")}
[sequence]
	editor = ${d("sequence-editor")}
[credential]
	helper = !${d("credential")}
[uploadpack]
	packObjectsHook = ${d("pack-objects-hook")}
[status]
	showUntrackedFiles = all
`;
  const extra = `[filter "evil2"]
	clean = ${d("clean2")}
	smudge = ${d("smudge2")}
[diff "evil2"]
	textconv = ${d("textconv2")}
`;
  const hook = (name: string) => `#!/bin/sh\nexec sh ${evil} hook-${name} "$@"\n`;
  const lines = [
    "set -e",
    `cd ${sh(root)}`,
    "export GIT_AUTHOR_NAME=Attacker GIT_AUTHOR_EMAIL=attacker@example.test GIT_COMMITTER_NAME=Attacker GIT_COMMITTER_EMAIL=attacker@example.test",
    "git init -q -b main .",
    ...hostileFiles.map((f) => `printf 'line one\\nline two\\n' > ${f}`),
    `printf '*.txt filter=evil diff=evil merge=evil\\n*.md diff=evilcmd\\n*.dat filter=evilproc\\n*.inc filter=evil2 diff=evil2\\n' > .gitattributes`,
    "git add -A && git commit -q -m baseline",
    `cat > .git/evil.sh <<'EOF_EVIL'\n${hostileDriver(repo)}EOF_EVIL`,
    "chmod +x .git/evil.sh",
    `printf '#!/bin/sh\\nexec sh ${evil} fsmonitor "$@"\\n' > .git/fsmonitor-hook && chmod +x .git/fsmonitor-hook`,
    `cat > .git/config <<'EOF_CONFIG'\n${config}EOF_CONFIG`,
    `cat > .git/extra.config <<'EOF_EXTRA'\n${extra}EOF_EXTRA`,
    "printf '*.cfg filter=evil diff=evil\\n' > .git/info/attributes",
    "printf '*.more filter=evil2 diff=evil2\\n' > .git/more-attributes",
    "mkdir -p .githooks .git/hooks",
    ...hookNames.flatMap((h) => [`cat > .githooks/${h} <<'EOF_HOOK'\n${hook(h)}EOF_HOOK`, `cp .githooks/${h} .git/hooks/${h}`]),
    "chmod +x .githooks/* .git/hooks/*",
    // changes for the routes to look at: every file modified, one new
    ...hostileFiles.filter((f) => f !== "m.txt").map((f) => `printf 'changed by the attacker\\n' >> ${f}`),
    "printf 'a new file\\n' > n.txt",
    // the session's own git ran nothing of the above yet; start the record of which drivers run
    "rm -rf .git/door-ran",
    "git -c core.fsmonitor=false -c core.hooksPath=/dev/null config --list | grep -c '' ",
    "echo hostile-ready",
  ];
  return lines.join("\n");
}

