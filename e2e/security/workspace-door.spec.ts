/**
 * The workspace door (issue 36): outside a sandbox, no Conduit process opens, walks, watches or
 * runs a program over a path inside a workspace or a CLI config directory. Attacked from real
 * sessions (approved Bash calls), with the owner then using every route that touches the files:
 *
 * - a hostile repository: a `.git` naming drivers of every kind (filters, textconv, external
 *   diff, merge driver, fsmonitor, ssh, pager, editor, gpg, credential helper, hooks, includes,
 *   attributes files), then symlinked git internals (refs, reflog, COMMIT_EDITMSG, ref
 *   directories) pointing outside, then objects borrowed from another member's repository
 *   (alternates, a `.git` file, a `.git` symlink). Each driver writes a marker at a host path
 *   outside the workspace and prints canaries it can read there; none may appear.
 * - a concurrent attacker: a loop swapping a directory with a symlink to a directory outside
 *   (renameat2 RENAME_EXCHANGE) while every file route, the change views, revert, rewind and an
 *   Edit approval's card are hammered; no canary byte comes back and nothing outside changes.
 * - CLI config directory links: `.claude.json` (and the guard's temporary names) as symlinks to
 *   files outside, then a respawn; the files outside stay as they were and never come back.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync, rmSync, statSync } from "node:fs";
import path from "node:path";
import { expect, test, type APIRequestContext } from "@playwright/test";
import type { Socket } from "socket.io-client";
import { uniqueEmail } from "../fixtures";
import { bashPrompt, editPrompt } from "./attack-scenarios";
import { commandId, connect, cookieHeader, signUpAndIn } from "./clients";
import { hostileFiles, hostileRepoScript } from "./hostile-repo";
import { AnswerWatch, changedFingerprints, fingerprint, fingerprintTree, markersIn, plant, runScript, sh, token } from "./door-support";
import { recordAttempt } from "./ledger";
import { SessionProbe } from "./session-probe";

const dataDir = process.env.CONDUIT_SECURITY_DATA_DIR!;
const apiKey = process.env.CONDUIT_SECURITY_API_KEY!;
const authSecret = () => readFileSync(path.join(dataDir, ".auth-secret"), "utf8").trim();

const run = token("").toLowerCase().slice(0, 10);
/** Where everything outside the workspaces lives: canaries, the swap's target, config targets. */
const outside = path.join(dataDir, `door-outside-${run}`);
/** Where a hostile program would leave its marks on the host (never created by the spec). */
const markerDirs = [`/tmp/conduit-door-marker-${run}`, path.join(dataDir, `door-marker-${run}`)];
const canary = {
  outside: token("DOORCANARY"),
  victim: token("VICTIMCANARY"),
  ref: token("REFCANARY"),
  swap: token("SWAPCANARY"),
  swapName: token("SWAPNAME"),
  config: token("CONFIGCANARY"),
};
const canaryFile = path.join(outside, "secret.txt");

let owner: APIRequestContext;
let victim: APIRequestContext;
let baseURL: string;
const watch = new AnswerWatch(
  () => ({
    "operator API key": apiKey,
    "auth secret": authSecret(),
    "outside canary": canary.outside,
    "victim's file": canary.victim,
    "outside ref's name": canary.ref,
    "swap target's content": canary.swap,
    "swap target's file name": canary.swapName,
    "outside config": canary.config,
  }),
  (text) => {
    let out = text.replaceAll(apiKey, "<operator API key>").replaceAll(authSecret(), "<auth secret>");
    for (const [name, value] of Object.entries(canary)) out = out.replaceAll(value, `<${name} canary>`);
    return out;
  },
);

interface Workspace {
  id: string;
  slug: string;
  root: string;
}

async function newWorkspace(client: APIRequestContext, name: string): Promise<Workspace> {
  const created = await client.post("/api/workspaces", { data: { name: `${name} ${run}` } });
  expect(created.status(), await created.text()).toBe(201);
  const { data } = (await created.json()) as { data: { slug: string } };
  const read = (await (await client.get(`/api/workspaces/${data.slug}`)).json()) as { data: { id: string; rootPath: string } };
  return { id: read.data.id, slug: data.slug, root: read.data.rootPath };
}

/** Git run by the spec itself on the host, for fixtures only (no repository config of anyone's). */
function hostGit(cwd: string, ...args: string[]): string {
  return execFileSync("git", ["-c", "user.name=Fixture", "-c", "user.email=fixture@example.test", "-c", "core.hooksPath=/dev/null", "-c", "init.defaultBranch=main", ...args], {
    cwd,
    env: { PATH: process.env.PATH, HOME: "/nonexistent", GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" } as Record<string, string> as NodeJS.ProcessEnv,
  })
    .toString()
    .trim();
}

/** What got through, per probe; each describe's last test fails on its own (so every probe runs first). */
const throughByGroup = new Map<string, string[]>();

/** Records one door probe: refused unless a marker appeared, a canary came back or a file outside changed. */
function probeResult(probe: string, check: string, attack: string, found: { markers?: string[]; leaks?: string[]; changed?: string[] }, detail: string) {
  const problems = [...(found.markers ?? []).map((m) => `marker ${m}`), ...(found.leaks ?? []), ...(found.changed ?? []).map((c) => `changed ${c}`)];
  const allowed = problems.length > 0;
  recordAttempt({ probe, check, attack, kind: "escape", allowed, detail: watch.redact(`${detail}${allowed ? ` — ${problems.join("; ")}` : ""}`).slice(0, 600) });
  if (allowed) {
    const family = probe.split(".")[0]!;
    throughByGroup.set(family, [...(throughByGroup.get(family) ?? []), watch.redact(`${probe} (${attack}): ${problems.join("; ")} [${detail}]`).slice(0, 1500)]);
  }
}

/** The last test of a describe: nothing of `families` got through (the ledger has the details). */
function nothingGotThrough(...families: string[]) {
  const through = families.flatMap((f) => throughByGroup.get(f) ?? []);
  expect(through, through.join("\n")).toEqual([]);
}

/** Runs `script` in the session with an approved Bash call and returns its output. */
async function inSession(probe: SessionProbe, script: string, name: string): Promise<string> {
  const outcome = await probe.runTool(bashPrompt(runScript(script, name)));
  expect(outcome.asked, "the Bash call was approved by a member").toBe(true);
  // the turn ends before the next prompt (else that prompt joins this turn and its changes)
  await probe.turnEnded();
  return outcome.text;
}

let victimWs: Workspace;
let victimHead: string;

test.beforeAll(async ({ baseURL: url }) => {
  test.setTimeout(120_000);
  baseURL = url!;
  owner = await signUpAndIn(baseURL, uniqueEmail("door-owner"));
  victim = await signUpAndIn(baseURL, uniqueEmail("door-victim"));
  for (const dir of markerDirs) expect(existsSync(dir), `${dir} does not exist before the attacks`).toBe(false);
  plant(canaryFile, `${canary.outside}\n`);
  plant(path.join(outside, "ref"), `ref: refs/heads/${canary.ref}\n`);
  plant(path.join(outside, "reflog"), "an outside file a reflog must not grow\n");
  plant(path.join(outside, "editmsg"), "an outside file a commit message must not overwrite\n");
  // another member's repository (the alternates and .git-file attacks borrow from it)
  victimWs = await newWorkspace(victim, "Door victim");
  plant(path.join(victimWs.root, "secret.txt"), `${canary.victim}\n`);
  hostGit(victimWs.root, "init", "-q");
  hostGit(victimWs.root, "add", "secret.txt");
  hostGit(victimWs.root, "commit", "-q", "-m", "the victim's secret");
  victimHead = hostGit(victimWs.root, "rev-parse", "HEAD");
});

test.afterAll(async () => {
  await owner?.dispose();
  await victim?.dispose();
});

// ---------------------------------------------------------------------------------------------
// 1. A hostile repository

/** Which drivers ran at all (inside the door or anywhere), from the repository's own record. */
function driversThatRan(root: string): string {
  const dir = path.join(root, ".git", "door-ran");
  return existsSync(dir) ? readdirSync(dir).sort().join(",") || "none" : "none";
}

test.describe("a hostile repository", () => {
  test.describe.configure({ mode: "serial" });
  let hostile: Workspace;
  let normal: Workspace;
  let attacker: SessionProbe;
  let tree: SessionProbe | undefined;
  let markersBefore: string[];

  test.beforeAll(async () => {
    test.setTimeout(180_000);
    hostile = await newWorkspace(owner, "Door hostile");
    normal = await newWorkspace(owner, "Door normal");
    attacker = await SessionProbe.open(owner, baseURL, hostile.slug);
  });

  test.afterAll(async () => {
    await tree?.stop().catch(() => undefined);
    tree?.close();
    await attacker?.stop().catch(() => undefined);
    attacker?.close();
  });

  /** Calls one route group and records it: no new marker on the host, no canary in the answers. */
  async function routeGroup(probe: string, attack: string, calls: () => Promise<unknown>) {
    const before = markersIn(markerDirs);
    const leaksBefore = watch.tally(probe).leaks.length;
    await calls();
    const after = markersIn(markerDirs).filter((m) => !before.includes(m));
    const leaks = watch.tally(probe).leaks.slice(leaksBefore);
    probeResult(probe, "S8", attack, { markers: after, leaks }, `${watch.summary(probe)}; drivers run (inside the repository's record): ${driversThatRan(hostile.root)}`);
  }

  const api = (ws: Workspace) => `/api/workspaces/${ws.slug}`;

  test("the session writes a repository whose config names every kind of driver", async () => {
    test.setTimeout(120_000);
    const out = await inSession(attacker, hostileRepoScript({ root: hostile.root, markerDirs, canaries: [canaryFile, path.join(dataDir, ".auth-secret"), path.join(victimWs.root, "secret.txt")] }), "hostile");
    expect(out, watch.redact(out)).toContain("hostile-ready");
    expect(existsSync(path.join(hostile.root, ".git", "evil.sh"))).toBe(true);
    markersBefore = markersIn(markerDirs);
    expect(markersBefore, "the session's own git left no mark on the host").toEqual([]);
  });

  test("a session in its own worktree of the hostile repository (git worktree add runs smudge filters and post-checkout)", async () => {
    test.setTimeout(120_000);
    await routeGroup("door/hostile.worktree-create", "worktree session of a hostile repository (worktree add)", async () => {
      try {
        tree = await SessionProbe.open(owner, baseURL, hostile.slug, { worktree: true });
        watch.check("door/hostile.worktree-create", "ok", "session:create");
      } catch (err) {
        watch.check("door/hostile.worktree-create", String(err), "session:create");
      }
    });
    if (tree) {
      // the session's branch changes m.txt (committed in its sandbox), the main checkout too (below)
      const out = await inSession(
        tree,
        [
          "export GIT_AUTHOR_NAME=Attacker GIT_AUTHOR_EMAIL=attacker@example.test GIT_COMMITTER_NAME=Attacker GIT_COMMITTER_EMAIL=attacker@example.test",
          "printf 'from the worktree\\n' >> m.txt && printf 'worktree file\\n' > w.txt",
          // the session's own git, with the repository's drivers off (it is not what is under test)
          "quiet='-c core.fsmonitor=false -c core.hooksPath=/dev/null -c commit.gpgSign=false -c filter.evil.clean= -c filter.evil.smudge= -c filter.evil.required=false -c filter.evilproc.process= -c filter.evil2.clean= -c filter.evil2.smudge='",
          "git $quiet add -A && git $quiet commit -q -m 'worktree work' && echo wt-committed",
        ].join("\n"),
        "worktree",
      );
      expect(out).toContain("wt-committed");
    }
  });

  test("every git route and the session's change views, as the owner", async () => {
    test.setTimeout(180_000);
    const ws = api(hostile);
    await routeGroup("door/hostile.status", "git status of a hostile repository", async () => {
      const res = await watch.http(owner, "door/hostile.status", "GET", `${ws}/git`);
      expect.soft(res.status, res.text).toBe(200);
    });
    await routeGroup("door/hostile.diff", "git diff of every file under a hostile driver", async () => {
      for (const f of [...hostileFiles, "n.txt", ".gitattributes"]) await watch.http(owner, "door/hostile.diff", "GET", `${ws}/git/diff?path=${encodeURIComponent(f)}`);
    });
    await routeGroup("door/hostile.discard", "git discard (checkout) under a smudge filter and post-checkout hook", async () => {
      await watch.http(owner, "door/hostile.discard", "POST", `${ws}/git/discard`, { path: "b.txt", confirmDelete: false });
      await watch.http(owner, "door/hostile.discard", "POST", `${ws}/git/discard`, { path: "f.cfg", confirmDelete: false });
      await watch.http(owner, "door/hostile.discard", "POST", `${ws}/git/discard`, { path: "n.txt", confirmDelete: true });
    });
    // m.txt changed in the main checkout too, so a merge of the worktree's branch is a real three-way one
    const out = await inSession(attacker, `cd ${sh(hostile.root)} && printf 'from main\\n' >> m.txt && echo main-changed`, "main-m");
    expect(out).toContain("main-changed");
    await routeGroup("door/hostile.commit", "git commit under clean filters, hooks, gpg and a reflog", async () => {
      const res = await watch.http(owner, "door/hostile.commit", "POST", `${ws}/git/commit`, { paths: ["a.txt", "c.md", "d.dat", "e.inc", "g.more", "m.txt"], message: "owner commits the hostile files" });
      watch.check("door/hostile.commit", res.text, "commit answer");
      await watch.http(owner, "door/hostile.commit", "GET", `${ws}/git`);
    });
    await routeGroup("door/hostile.changes", "a session's change views over a hostile repository", async () => {
      const res = await watch.http(owner, "door/hostile.changes", "GET", `${ws}/sessions/${attacker.sessionId}/changes`);
      const turns = res.status === 200 ? ((res.json() as { data: { turns: { id: string }[] } }).data.turns ?? []) : [];
      for (const f of [...hostileFiles, "n.txt", ".git/config"]) {
        await watch.http(owner, "door/hostile.changes", "GET", `${ws}/sessions/${attacker.sessionId}/changes/file?session=1&path=${encodeURIComponent(f)}`);
        for (const t of turns) await watch.http(owner, "door/hostile.changes", "GET", `${ws}/sessions/${attacker.sessionId}/changes/file?turn=${t.id}&path=${encodeURIComponent(f)}`);
      }
    });
    if (!tree) return;
    await routeGroup("door/hostile.worktree", "a worktree's view and diffs in a hostile repository", async () => {
      await watch.http(owner, "door/hostile.worktree", "GET", `${ws}/git/worktrees/${tree!.sessionId}`);
      for (const f of ["m.txt", "w.txt", "a.txt"]) await watch.http(owner, "door/hostile.worktree", "GET", `${ws}/git/worktrees/${tree!.sessionId}/diff?path=${f}`);
      await watch.http(owner, "door/hostile.worktree", "GET", `${ws}/sessions/${tree!.sessionId}/changes`);
      await watch.http(owner, "door/hostile.worktree", "GET", `${ws}/sessions/${tree!.sessionId}/changes/file?session=1&path=m.txt`);
    });
    await tree.stop();
    await routeGroup("door/hostile.merge", "merging a worktree's branch back under a merge driver, then without one", async () => {
      const refused = await watch.http(owner, "door/hostile.merge", "POST", `${ws}/git/worktrees/${tree!.sessionId}/merge`, { strategy: "merge" });
      watch.check("door/hostile.merge", refused.text, "merge answer");
      // the config without its merge driver: the merge runs (filters, hooks and textconv still named)
      const out = await inSession(attacker, `cd ${sh(hostile.root)} && git config --unset merge.evil.driver && rm -rf .git/door-ran && echo driver-gone`, "unset-merge");
      expect(out).toContain("driver-gone");
      for (const strategy of ["merge", "rebase"]) await watch.http(owner, "door/hostile.merge", "POST", `${ws}/git/worktrees/${tree!.sessionId}/merge`, { strategy });
    });
    await routeGroup("door/hostile.worktree-delete", "discarding a worktree of a hostile repository", async () => {
      await watch.http(owner, "door/hostile.worktree-delete", "DELETE", `${ws}/git/worktrees/${tree!.sessionId}`);
    });
  });

  test("symlinked git internals pointing outside (refs, reflog, COMMIT_EDITMSG, ref directories)", async () => {
    test.setTimeout(180_000);
    const ws = api(hostile);
    const outsideFiles = ["reflog", "editmsg", "ref"].map((f) => path.join(outside, f));
    const before = outsideFiles.map(fingerprint);
    const dataBefore = readdirSync(dataDir);
    const refMarker = `door-marker-ref-${run}`;
    const script = [
      `cd ${sh(hostile.root)}`,
      "export GIT_AUTHOR_NAME=Attacker GIT_AUTHOR_EMAIL=attacker@example.test GIT_COMMITTER_NAME=Attacker GIT_COMMITTER_EMAIL=attacker@example.test",
      // a plain config again: only the links below are under test
      "printf '[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n\\tlogallrefupdates = true\\n' > .git/config",
      "rm -f .gitattributes .git/info/attributes; rm -rf .githooks .git/hooks .git/door-ran",
      "git add -A >/dev/null 2>&1; git commit -q -m plain >/dev/null 2>&1 || true",
      "mkdir -p .git/logs",
      `rm -f .git/logs/HEAD && ln -s ${sh(path.join(outside, "reflog"))} .git/logs/HEAD`,
      `rm -f .git/COMMIT_EDITMSG && ln -s ${sh(path.join(outside, "editmsg"))} .git/COMMIT_EDITMSG`,
      `ln -sfn ${sh(path.join(outside, "ref"))} .git/refs/heads/leak`,
      `mkdir -p .git/refs/remotes && ln -sfn ${sh(dataDir)} .git/refs/remotes/data`,
      `ln -sfn ${sh(outside)} .git/refs/tags/outside`,
      "printf 'changed again\\n' >> a.txt && printf 'changed again\\n' >> b.txt",
      "echo links-ready",
    ].join("\n");
    expect(await inSession(attacker, script, "links")).toContain("links-ready");
    await routeGroup("door/git-links.routes", "status, diff, commit and discard over symlinked refs, reflog and COMMIT_EDITMSG", async () => {
      await watch.http(owner, "door/git-links.routes", "GET", `${ws}/git`);
      await watch.http(owner, "door/git-links.routes", "GET", `${ws}/git/diff?path=a.txt`);
      await watch.http(owner, "door/git-links.routes", "POST", `${ws}/git/commit`, { paths: ["a.txt"], message: "through the links" });
      await watch.http(owner, "door/git-links.routes", "POST", `${ws}/git/discard`, { path: "b.txt", confirmDelete: false });
      await watch.http(owner, "door/git-links.routes", "GET", `${ws}/git`);
    });
    // HEAD on the symlinked ref: its content (outside) names a branch; the answer must not carry it
    expect(await inSession(attacker, `cd ${sh(hostile.root)} && printf 'ref: refs/heads/leak\\n' > .git/HEAD && printf 'x\\n' >> a.txt && echo head-moved`, "head")).toContain("head-moved");
    await routeGroup("door/git-links.head", "HEAD through a symlinked ref whose target outside names a branch", async () => {
      await watch.http(owner, "door/git-links.head", "GET", `${ws}/git`);
      await watch.http(owner, "door/git-links.head", "GET", `${ws}/git/diff?path=a.txt`);
      await watch.http(owner, "door/git-links.head", "POST", `${ws}/git/commit`, { paths: ["a.txt"], message: "on the leaked branch" });
    });
    // refs/heads itself a link to the data directory: a commit would create a ref file there
    const moved = [
      `cd ${sh(hostile.root)}`,
      "rm -rf .git/refs/heads.real && mv .git/refs/heads .git/refs/heads.real",
      `ln -s ${sh(dataDir)} .git/refs/heads`,
      `printf 'ref: refs/heads/${refMarker}\\n' > .git/HEAD`,
      "printf 'y\\n' >> a.txt && echo heads-linked",
    ].join("\n");
    expect(await inSession(attacker, moved, "heads")).toContain("heads-linked");
    await routeGroup("door/git-links.heads-dir", "refs/heads a symlink to the data directory, then a commit", async () => {
      await watch.http(owner, "door/git-links.heads-dir", "GET", `${ws}/git`);
      await watch.http(owner, "door/git-links.heads-dir", "POST", `${ws}/git/commit`, { paths: ["a.txt"], message: "a ref in the data directory" });
    });
    const newInData = readdirSync(dataDir).filter((n) => !dataBefore.includes(n) && (n.includes(refMarker) || n.startsWith("door-marker-ref")));
    const changed = changedFingerprints(before, outsideFiles.map(fingerprint));
    probeResult("door/git-links.outside-unchanged", "S8", "files outside written through symlinked git internals", { changed: [...changed, ...newInData.map((n) => `new ${n} in the data directory`)] }, `reflog, COMMIT_EDITMSG and ref targets fingerprinted; data directory listed`);
    // back to a sane repository for what follows
    await inSession(attacker, `cd ${sh(hostile.root)} && rm -f .git/refs/heads && mv .git/refs/heads.real .git/refs/heads; echo restored`, "restore");
  });

  test("another member's objects: alternates, a .git file and a .git symlink naming the victim's repository", async () => {
    test.setTimeout(180_000);
    const ws = api(hostile);
    const victimGit = path.join(victimWs.root, ".git");
    const victimBefore = fingerprintTree(victimGit).filter((f) => !f.path.includes(`${path.sep}objects${path.sep}`) || f.kind === "dir");
    const variants: { probe: string; attack: string; script: string[] }[] = [
      {
        probe: "door/borrowed.alternates",
        attack: "objects/info/alternates pointing at another member's repository, HEAD on its commit",
        script: [
          "rm -rf .git && git init -q -b main . && git add -A >/dev/null && git commit -q -m mine",
          `echo ${sh(path.join(victimGit, "objects"))} > .git/objects/info/alternates`,
          `echo ${victimHead} > .git/refs/heads/stolen`,
          "printf 'ref: refs/heads/stolen\\n' > .git/HEAD",
        ],
      },
      {
        probe: "door/borrowed.gitfile",
        attack: "a .git file naming another member's git directory",
        script: ["rm -rf .git", `printf 'gitdir: %s\\n' ${sh(victimGit)} > .git`],
      },
      {
        probe: "door/borrowed.git-symlink",
        attack: "a .git symlink to another member's git directory",
        script: ["rm -rf .git", `ln -s ${sh(victimGit)} .git`],
      },
      {
        probe: "door/borrowed.commondir",
        attack: "a main .git whose commondir names another member's git directory",
        script: ["rm -rf .git && git init -q -b main .", `echo ${sh(victimGit)} > .git/commondir`],
      },
    ];
    for (const v of variants) {
      const script = [
        `cd ${sh(hostile.root)}`,
        "export GIT_AUTHOR_NAME=Attacker GIT_AUTHOR_EMAIL=attacker@example.test GIT_COMMITTER_NAME=Attacker GIT_COMMITTER_EMAIL=attacker@example.test",
        "rm -f .git 2>/dev/null; true",
        ...v.script,
        "rm -f secret.txt; printf 'mine\\n' > mine.txt",
        "echo variant-ready",
      ].join("\n");
      expect(await inSession(attacker, script, "borrow")).toContain("variant-ready");
      await routeGroup(v.probe, v.attack, async () => {
        await watch.http(owner, v.probe, "GET", `${ws}/git`);
        await watch.http(owner, v.probe, "GET", `${ws}/git/diff?path=secret.txt`);
        await watch.http(owner, v.probe, "POST", `${ws}/git/discard`, { path: "secret.txt", confirmDelete: false });
        await watch.http(owner, v.probe, "GET", `${ws}/files/content?path=secret.txt`);
        await watch.http(owner, v.probe, "POST", `${ws}/git/commit`, { paths: ["mine.txt"], message: "into the victim's repository?" });
        await watch.http(owner, v.probe, "GET", `${ws}/sessions/${attacker.sessionId}/changes`);
      });
      const copied = existsSync(path.join(hostile.root, "secret.txt")) && readFileSync(path.join(hostile.root, "secret.txt"), "utf8").includes(canary.victim);
      if (copied) probeResult(`${v.probe}`, "S8", `${v.attack}: the victim's file checked out into the attacker's workspace`, { leaks: ["victim's file written into the attacker's workspace"] }, "secret.txt");
    }
    const victimAfter = fingerprintTree(victimGit).filter((f) => !f.path.includes(`${path.sep}objects${path.sep}`) || f.kind === "dir");
    probeResult("door/borrowed.victim-unchanged", "S8", "another member's repository written through a borrowed git directory", { changed: changedFingerprints(victimBefore, victimAfter) }, "the victim's .git fingerprinted (refs, index, logs, config)");
    await inSession(attacker, `cd ${sh(hostile.root)} && rm -rf .git; echo cleaned`, "clean");
  });

  test("no marker of any driver exists on the host afterwards, and a normal repository still works", async () => {
    const marks = markersIn(markerDirs);
    probeResult("door/hostile.no-marker", "S8", "any hostile driver left a mark on the host", { markers: marks }, `marker dirs ${markerDirs.length} checked; ${marks.length} marks`);
    // control: a plain repository in a third workspace
    plant(path.join(normal.root, "readme.txt"), "hello\n");
    hostGit(normal.root, "init", "-q");
    hostGit(normal.root, "add", "readme.txt");
    hostGit(normal.root, "commit", "-q", "-m", "first");
    plant(path.join(normal.root, "readme.txt"), "hello again\n");
    const status = await owner.get(`/api/workspaces/${normal.slug}/git`);
    const body = (await status.json()) as { data: { repository: boolean; files?: { path: string }[] } };
    expect(status.status()).toBe(200);
    expect(body.data.repository).toBe(true);
    expect(body.data.files?.map((f) => f.path)).toContain("readme.txt");
    const diff = await owner.get(`/api/workspaces/${normal.slug}/git/diff?path=readme.txt`);
    expect(diff.status(), await diff.text()).toBe(200);
    const commit = await owner.post(`/api/workspaces/${normal.slug}/git/commit`, { data: { paths: ["readme.txt"], message: "a normal commit" } });
    expect(commit.status(), await commit.text()).toBe(201);
    expect(hostGit(normal.root, "log", "-1", "--format=%s")).toBe("a normal commit");
  });

  test("nothing of the hostile repository got through (markers, canaries, files outside)", () => {
    nothingGotThrough("door/hostile", "door/git-links", "door/borrowed");
  });
});

// ---------------------------------------------------------------------------------------------
// 2. A concurrent attacker: a directory swapped with a symlink to a directory outside

/** Requests in flight at once while the swap runs. */
const workers = 12;

const swapInside = { files: Array.from({ length: 60 }, (_, i) => `v-${i}.txt`), modified: Array.from({ length: 40 }, (_, i) => `m-${i}.txt`) };

/** The python loop that swaps `d` with `dlink` (and `e` with `elink`) as fast as it can. */
function swapLoop(root: string): string {
  return `import ctypes, os, time
libc = ctypes.CDLL(None, use_errno=True)
os.chdir(${JSON.stringify(root)})
pairs = [(b"d", b"dlink"), (b"e", b"elink")]
n = 0
failed = 0
end = time.time() + 600
while time.time() < end and not os.path.exists("stop-swap"):
    for a, b in pairs:
        if libc.renameat2(-100, a, -100, b, 2) != 0:
            failed += 1
    n += 1
    if n % 20000 == 0:
        with open("swap-count.tmp", "w") as f:
            f.write("%d %d\\n" % (n, failed))
with open("swap-count.tmp", "w") as f:
    f.write("%d %d done\\n" % (n, failed))
`;
}

test.describe("a concurrent attacker", () => {
  test.describe.configure({ mode: "serial" });
  let ws: Workspace;
  let attacker: SessionProbe;
  /** The owner's sockets, one a worker (a socket has a cap on commands in flight). */
  const sides: Socket[] = [];
  const target = path.join(outside, "swap-target");

  test.beforeAll(async () => {
    test.setTimeout(180_000);
    ws = await newWorkspace(owner, "Door swap");
    attacker = await SessionProbe.open(owner, baseURL, ws.slug);
    // the directory outside the symlink names: the same file names as inside, other bytes
    for (const f of ["f.txt", "sub/s.txt", ...swapInside.files, ...swapInside.modified]) plant(path.join(target, f), `${canary.swap} ${f}\n`);
    plant(path.join(target, `${canary.swapName}.txt`), `${canary.swap}\n`);
    for (let i = 0; i < workers; i++) {
      const s = await connect(baseURL, await cookieHeader(owner));
      if (s instanceof Error) throw s;
      sides.push(s);
    }
  });

  test.afterAll(async () => {
    for (const s of sides) s.close();
    await attacker?.stop().catch(() => undefined);
    attacker?.close();
  });

  test("≥ 2,000 requests over every file route, the change views, revert, rewind and an Edit card while d ⇄ d→outside swaps", async () => {
    test.setTimeout(600_000);
    const root = ws.root;
    // turn 1 adds the files, turn 2 modifies some (what revert and rewind take back)
    const setup = [
      `cd ${sh(root)}`,
      "mkdir -p d/sub e",
      "printf 'inside f\\n' > d/f.txt && printf 'inside s\\n' > d/sub/s.txt && printf 'inside\\n' > e/.auth-secret",
      `for f in ${[...swapInside.files, ...swapInside.modified].join(" ")}; do printf 'inside %s\\n' $f > d/$f; done`,
      "echo turn1-ready",
    ].join("\n");
    expect(await inSession(attacker, setup, "swap1")).toContain("turn1-ready");
    expect(await inSession(attacker, [`cd ${sh(root)}`, `for f in ${swapInside.modified.join(" ")}; do printf 'modified\\n' >> d/$f; done`, "echo turn2-ready"].join("\n"), "swap2")).toContain("turn2-ready");
    type Turn = { id: string; promptSeq: number | null; status: string; files: { path: string }[] };
    let all: Turn[] = [];
    // a turn's snapshot is taken after its result: wait for the second
    const deadlineTurns = Date.now() + 30_000;
    while (Date.now() < deadlineTurns) {
      const changes = (await (await owner.get(`/api/workspaces/${ws.slug}/sessions/${attacker.sessionId}/changes`)).json()) as { data: { turns: Turn[] } };
      all = changes.data.turns;
      if (all.filter((t) => t.files.length > 0).length >= 2) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    const turns = all.filter((t) => t.files.length > 0);
    expect(turns.length, JSON.stringify(all).slice(0, 2000)).toBeGreaterThanOrEqual(1);
    const turnsSeen = all.map((t) => `#${t.promptSeq} ${t.status} ${t.files.length} files`).join(", ");
    test.info().annotations.push({ type: "turns", description: turnsSeen });
    // (when the second turn's change was not recorded, the take-backs aim at the first)
    const [turn1, turn2] = [turns[0]!, turns[1] ?? turns[0]!];

    const outsideBefore = fingerprintTree(target);
    const secretBefore = fingerprint(path.join(dataDir, ".auth-secret"));
    const dataListing = new Set(readdirSync(dataDir));
    // turn 3 starts the swap loop in the background (it lives as long as the session)
    const start = [
      `cd ${sh(root)}`,
      "command -v python3 >/dev/null || { echo no-python; exit 1; }",
      `ln -sfn ${sh(target)} dlink && ln -sfn ${sh(dataDir)} elink`,
      `cat > /tmp/swap.py <<'EOF_PY'\n${swapLoop(root)}EOF_PY`,
      "nohup python3 /tmp/swap.py > /dev/null 2>&1 &",
      "sleep 1; cat swap-count.tmp 2>/dev/null; ls -la | head -20; echo loop-started",
    ].join("\n");
    const started = await inSession(attacker, start, "swap3");
    expect(started, started).toContain("loop-started");
    await expect.poll(() => existsSync(path.join(root, "swap-count.tmp")), { timeout: 20_000, message: "the swap loop runs" }).toBe(true);

    const base = `/api/workspaces/${ws.slug}`;
    const q = encodeURIComponent;
    let n = 0;
    const ops: [string, (side: Socket) => Promise<unknown>][] = [
      ["door/swap.files-list", () => watch.http(owner, "door/swap.files-list", "GET", `${base}/files?path=${q(["d", "d/sub", "e"][n % 3]!)}`)],
      ["door/swap.files-search", () => watch.http(owner, "door/swap.files-search", "GET", `${base}/files/search?q=${q(["SWAPNAME", "f.txt", "s.txt", "v-1"][n % 4]!)}`)],
      ["door/swap.files-read", () => watch.http(owner, "door/swap.files-read", "GET", `${base}/files/content?path=${q(["d/f.txt", "d/sub/s.txt", "e/.auth-secret", `d/${swapInside.files[n % 60]}`][n % 4]!)}`)],
      ["door/swap.files-version", () => watch.http(owner, "door/swap.files-version", "GET", `${base}/files/content?path=${q(["d/f.txt", "e/.auth-secret"][n % 2]!)}&versionOnly=1`)],
      // a save over an existing file answers 409 with the file's content: the content must be the inside one
      ["door/swap.files-save", () => watch.http(owner, "door/swap.files-save", "PUT", `${base}/files/content`, { path: n % 2 ? "d/f.txt" : `d/saved-${n}.txt`, content: `saved by the owner ${n}\n`, baseVersion: null })],
      ["door/swap.files-create", () => watch.http(owner, "door/swap.files-create", "POST", `${base}/files`, { path: n % 3 ? `d/c-${n}.txt` : `d/cd-${n}`, kind: n % 3 ? "file" : "dir", content: n % 3 ? "created\n" : undefined })],
      [
        "door/swap.files-rename",
        async () => {
          const i = n;
          await watch.http(owner, "door/swap.files-create", "POST", `${base}/files`, { path: `d/r-${i}.txt`, kind: "file", content: "to rename\n" });
          await watch.http(owner, "door/swap.files-rename", "POST", `${base}/files/rename`, { from: `d/r-${i}.txt`, to: `d/rr-${i}.txt` });
        },
      ],
      ["door/swap.files-delete", () => watch.http(owner, "door/swap.files-delete", "DELETE", `${base}/files?path=${q(n % 2 ? `d/${swapInside.files[n % 60]}` : `d/rr-${n - 1}.txt`)}`)],
      ["door/swap.changes", () => watch.http(owner, "door/swap.changes", "GET", `${base}/sessions/${attacker.sessionId}/changes`)],
      [
        "door/swap.changes-file",
        () => watch.http(owner, "door/swap.changes-file", "GET", `${base}/sessions/${attacker.sessionId}/changes/file?${n % 2 ? "session=1" : `turn=${turn2.id}`}&path=${q(n % 2 ? "d/f.txt" : `d/${swapInside.modified[n % 40]}`)}`),
      ],
      [
        "door/swap.revert",
        (side) =>
          watch.socket(side, "door/swap.revert", n % 3 ? "changes:revert-file" : "changes:revert-hunk", {
            sessionId: attacker.sessionId,
            scope: n % 2 ? { turn: turn2.id } : { session: true },
            path: `d/${swapInside.modified[n % 40]}`,
            ...(n % 3 ? {} : { hunk: 0 }),
            commandId: commandId(),
          }),
      ],
      ["door/swap.rewind-preview", (side) => watch.socket(side, "door/swap.rewind-preview", "session:rewind", { sessionId: attacker.sessionId, promptSeq: turn2.promptSeq ?? 1, confirm: false, commandId: commandId() })],
    ];
    const total = 2_100;
    const deadline = Date.now() + 420_000;
    const hammer = async (side: Socket) => {
      while (n < total && Date.now() < deadline) {
        const op = ops[n % ops.length]!;
        n += 1;
        await op[1](side);
      }
    };
    // the Edit approval's card, read from disk while the swap runs, in parallel with the hammering
    const cards = async () => {
      for (let i = 0; i < 12 && Date.now() < deadline; i++) {
        const file = [`${root}/e/.auth-secret`, `${root}/d/f.txt`, `${root}/d/sub/s.txt`, `${root}/d/${swapInside.files[i]}`][i % 4]!;
        try {
          const view = await attacker.reviewAndDeny(editPrompt(file));
          watch.check("door/swap.approval-card", JSON.stringify(view), "approval card");
        } catch (err) {
          watch.check("door/swap.approval-card", String(err), "approval card");
        }
      }
    };
    await Promise.all([...sides.map(hammer), cards()]);
    // a confirmed rewind and take-backs at the end (they change the inside files back)
    for (const confirm of [true, true]) {
      await watch.socket(sides[0]!, "door/swap.rewind", "session:rewind", { sessionId: attacker.sessionId, promptSeq: turn2.promptSeq ?? 1, confirm, includeConflicts: true, commandId: commandId() });
      await watch.socket(sides[0]!, "door/swap.rewind", "session:rewind", { sessionId: attacker.sessionId, promptSeq: turn1.promptSeq ?? 1, confirm, includeConflicts: true, commandId: commandId() });
    }
    plant(path.join(root, "stop-swap"), "stop\n");
    await new Promise((r) => setTimeout(r, 1_000));
    const swaps = existsSync(path.join(root, "swap-count.tmp")) ? readFileSync(path.join(root, "swap-count.tmp"), "utf8").trim() : "unknown";
    const requests = [...watch.groups].filter(([g]) => g.startsWith("door/swap.")).reduce((sum, [, t]) => sum + t.requests, 0);
    expect(requests, "at least 2,000 requests were made").toBeGreaterThanOrEqual(2_000);

    for (const [group, t] of [...watch.groups].filter(([g]) => g.startsWith("door/swap."))) {
      probeResult(group, "S5", `${group.slice("door/swap.".length)} while d swaps with a symlink to a directory outside`, { leaks: [...new Set(t.leaks)] }, `${watch.summary(group)}; swaps (count failures) ${swaps}`);
    }
    const outsideAfter = fingerprintTree(target);
    const newInData = readdirSync(dataDir).filter((n) => !dataListing.has(n) && /^(saved|c|cd|r|rr)-\d+|^v-|^m-/.test(n));
    probeResult(
      "door/swap.outside-unchanged",
      "S5",
      "files outside changed, created or deleted through the swapped directory",
      { changed: [...changedFingerprints(outsideBefore, outsideAfter), ...changedFingerprints([secretBefore], [fingerprint(path.join(dataDir, ".auth-secret"))]), ...newInData] },
      `${outsideBefore.length} files outside fingerprinted (sha256, mtime); ${requests} requests; swaps ${swaps}; setup turns: ${turnsSeen}`,
    );
  });

  test("nothing of the concurrent attacker got through", () => {
    nothingGotThrough("door/swap");
  });
});

// ---------------------------------------------------------------------------------------------
// 3. Links in a session's CLI config directory

test.describe("links in the CLI config directory", () => {
  test.describe.configure({ mode: "serial" });
  let ws: Workspace;
  let attacker: SessionProbe;
  const configTarget = path.join(outside, "config-target.json");
  const tempTarget = path.join(outside, "config-temp-target.json");

  test.beforeAll(async () => {
    test.setTimeout(120_000);
    ws = await newWorkspace(owner, "Door config");
    attacker = await SessionProbe.open(owner, baseURL, ws.slug);
    // JSON with a project grant, so the guard has something to take out (and writes)
    plant(configTarget, JSON.stringify({ canary: canary.config, projects: { "/somewhere": { hasTrustDialogAccepted: true, allowedTools: ["Bash"] } } }, null, 2));
    plant(tempTarget, JSON.stringify({ canary: canary.config, note: "a temporary name's target" }));
  });

  test.afterAll(async () => {
    await attacker?.stop().catch(() => undefined);
    attacker?.close();
  });

  /** The host's pids of the sidecar and of doors (the guard's temporary name carries one). */
  function hostPids(): number[] {
    const pids: number[] = [];
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const cmd = readFileSync(`/proc/${entry}/cmdline`, "utf8");
        if (cmd.includes("sidecar") || cmd.includes("door")) pids.push(Number(entry));
      } catch {
        // gone
      }
    }
    return pids;
  }

  test(".claude.json and the guard's temporary names as symlinks outside, then a respawn", async () => {
    test.setTimeout(180_000);
    const configDir = path.join(dataDir, "claude-config", ws.id);
    expect(existsSync(configDir), "the session's CLI config directory").toBe(true);
    const before = [fingerprint(configTarget), fingerprint(tempTarget)];
    // guessable temporary names: `.claude.json.conduit-<pid>` for small pids (a door's own pid
    // namespace) and the host's sidecar and door pids (an attacker who guesses well)
    const pids = [...Array.from({ length: 400 }, (_, i) => i + 1), ...hostPids()];
    const script = [
      'cd "$CLAUDE_CONFIG_DIR" || exit 1',
      `printf '%s\\n' ${pids.join(" ")} > /tmp/pids`,
      // the CLI is killed (SIGKILL: it writes nothing on the way out) once the links are in place
      `( sleep 2`,
      `  while read p; do ln -sfn ${sh(tempTarget)} ".claude.json.conduit-$p"; ln -sfn ${sh(tempTarget)} ".claude.json.tmp.$p"; done < /tmp/pids`,
      `  ln -sfn ${sh(configTarget)} .claude.json`,
      `  ln -sfn ${sh(path.dirname(configTarget))} projects-outside`,
      // the CLI: the ancestor started with --output-format stream-json
      "  cli=$PPID; while [ \"$cli\" -gt 1 ] && ! tr '\\0' ' ' < /proc/$cli/cmdline | grep -q -- stream-json; do cli=$(awk '{print $4}' /proc/$cli/stat); done",
      '  [ "$cli" -gt 1 ] && kill -9 "$cli"',
      ") > /dev/null 2>&1 &",
      "echo links-scheduled",
    ].join("\n");
    expect(await inSession(attacker, script, "config")).toContain("links-scheduled");
    // the links are planted and the CLI is gone
    await expect.poll(() => existsSync(path.join(configDir, ".claude.json")) && statSync(path.join(configDir, ".claude.json"), { throwIfNoEntry: false }) !== undefined && readFileSync(path.join(configDir, ".claude.json"), "utf8").includes(canary.config), { timeout: 20_000, message: ".claude.json links outside" }).toBe(true);
    await new Promise((r) => setTimeout(r, 2_000));
    // a respawn: the next prompt starts the CLI again (the guard runs before every spawn)
    let respawned = "";
    try {
      await attacker.stop().catch(() => undefined);
      const out = await attacker.runTool(bashPrompt('cat "$CLAUDE_CONFIG_DIR/.claude.json" "$CLAUDE_CONFIG_DIR"/.claude.json.* 2>&1 | head -c 20000; echo; echo respawned'));
      respawned = out.text;
      watch.check("door/config.outside-bytes", out.text, "the respawned session's view of its config directory");
    } catch (err) {
      respawned = String(err);
    }
    const after = [fingerprint(configTarget), fingerprint(tempTarget)];
    probeResult("door/config.outside-unchanged", "S8", ".claude.json and its temporary names linked outside, then a respawn: files outside written", { changed: changedFingerprints(before, after) }, `${pids.length} temporary names linked; respawn ${respawned.includes("respawned") ? "ran" : "did not run a tool"}`);
    const t = watch.tally("door/config.outside-bytes");
    probeResult("door/config.outside-bytes", "S8", "an outside file's bytes copied into the session's config directory by the guard", { leaks: [...new Set(t.leaks)] }, watch.redact(respawned).slice(0, 200));
    // nothing left behind for the secret scan to trip on: the links go
    rmSync(path.join(configDir, "projects-outside"), { force: true });
  });

  test("nothing of the config directory links got through", () => {
    nothingGotThrough("door/config");
  });
});
