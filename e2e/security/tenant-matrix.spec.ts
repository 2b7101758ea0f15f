/**
 * The cross-tenant matrix: every route handler and every socket command, tried by an owner, an
 * editor, a viewer, a non-member and a signed-out client against one workspace, through the real
 * edge, web app and sidecar. Each cell has an expectation; an "allow" where a denial was expected
 * is a security failure, a denial where an allow was expected means the matrix is not testing
 * what it claims. New route handlers must be added here: the test lists app/api and fails on
 * any route without a row.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { expect, test, type APIRequestContext } from "@playwright/test";
import { uniqueEmail } from "../fixtures";
import { commandId, connect, cookieHeader, emit, newClient, signUpAndIn, userIdOf } from "./clients";
import { recordAttempt } from "./ledger";

type Who = "owner" | "editor" | "viewer" | "outsider" | "anonymous";
const everyone: Who[] = ["owner", "editor", "viewer", "outsider", "anonymous"];
type Expect = "allow" | "deny";

/** Who is allowed; everyone else must be denied. */
const only = (...allowed: Who[]): Record<Who, Expect> =>
  Object.fromEntries(everyone.map((w) => [w, allowed.includes(w) ? "allow" : "deny"])) as Record<Who, Expect>;
const members = only("owner", "editor", "viewer");
const signedIn = only("owner", "editor", "viewer", "outsider");
const steerers = only("owner", "editor");
const owners = only("owner");
const nobody = only();

interface Fixture {
  baseURL: string;
  slug: string;
  otherSlug: string;
  /** The workspace's directory: a git repository (the git routes' rows). */
  rootPath: string;
  sessionId: string;
  ids: Record<"owner" | "editor" | "viewer" | "outsider" | "spare", string>;
  invitationId: string;
  /** The digest of the workspace's (absent) settings files, as an owner's review shows it. */
  settingsDigest: string;
  /** The seq of the owner's prompt with an image, and that image's id. */
  promptSeq: number;
  imageId: string;
  /** A (disabled) MCP server of the workspace, for its PATCH and DELETE rows. */
  mcpServerId: string;
}

interface RouteCase {
  /** "METHOD /api/template" as found in app/api (dynamic segments in brackets). */
  route: string;
  path: (f: Fixture) => string;
  body?: (f: Fixture) => unknown;
  expect: Record<Who, Expect>;
}

/** Every route handler, in the order they are tried (state-changing ones last, owner last). */
const routeCases: RouteCase[] = [
  { route: "GET /api/health", path: () => "/api/health", expect: only(...everyone) },
  { route: "GET /api/workspaces", path: () => "/api/workspaces", expect: signedIn },
  { route: "GET /api/workspaces/[slug]", path: (f) => `/api/workspaces/${f.slug}`, expect: members },
  { route: "GET /api/workspaces/[slug]/members", path: (f) => `/api/workspaces/${f.slug}/members`, expect: members },
  { route: "GET /api/workspaces/[slug]/sessions", path: (f) => `/api/workspaces/${f.slug}/sessions`, expect: members },
  { route: "GET /api/workspaces/[slug]/sessions/[session]", path: (f) => `/api/workspaces/${f.slug}/sessions/${f.sessionId}`, expect: members },
  { route: "GET /api/workspaces/[slug]/sessions/[session]/events", path: (f) => `/api/workspaces/${f.slug}/sessions/${f.sessionId}/events`, expect: members },
  { route: "GET /api/workspaces/[slug]/sessions/[session]/changes", path: (f) => `/api/workspaces/${f.slug}/sessions/${f.sessionId}/changes`, expect: members },
  { route: "GET /api/workspaces/[slug]/sessions/[session]/changes", path: (f) => `/api/workspaces/${f.otherSlug}/sessions/${f.sessionId}/changes`, expect: nobody },
  { route: "GET /api/workspaces/[slug]/sessions/[session]/changes/file", path: (f) => `/api/workspaces/${f.slug}/sessions/${f.sessionId}/changes/file?session=1&path=matrix-files/seed.txt`, expect: members },
  { route: "GET /api/workspaces/[slug]/sessions/[session]/changes/file", path: (f) => `/api/workspaces/${f.otherSlug}/sessions/${f.sessionId}/changes/file?session=1&path=matrix-files/seed.txt`, expect: nobody },
  { route: "GET /api/workspaces/[slug]/sessions/[session]/images/[image]", path: (f) => `/api/workspaces/${f.slug}/sessions/${f.sessionId}/images/${f.imageId}`, expect: members },
  // this session's image through another workspace's slug: nobody
  { route: "GET /api/workspaces/[slug]/sessions/[session]/images/[image]", path: (f) => `/api/workspaces/${f.otherSlug}/sessions/${f.sessionId}/images/${f.imageId}`, expect: nobody },
  { route: "GET /api/workspaces/[slug]/budget", path: (f) => `/api/workspaces/${f.slug}/budget`, expect: members },
  { route: "GET /api/workspaces/[slug]/network", path: (f) => `/api/workspaces/${f.slug}/network`, expect: members },
  { route: "GET /api/workspaces/[slug]/mcp", path: (f) => `/api/workspaces/${f.slug}/mcp`, expect: members },
  { route: "GET /api/workspaces/[slug]/approval-settings", path: (f) => `/api/workspaces/${f.slug}/approval-settings`, expect: members },
  { route: "GET /api/workspaces/[slug]/files", path: (f) => `/api/workspaces/${f.slug}/files?path=matrix-files`, expect: members },
  { route: "GET /api/workspaces/[slug]/files/search", path: (f) => `/api/workspaces/${f.slug}/files/search?q=seed`, expect: members },
  { route: "GET /api/workspaces/[slug]/files/content", path: (f) => `/api/workspaces/${f.slug}/files/content?path=matrix-files/seed.txt`, expect: members },
  // this workspace's file through another workspace's slug: nobody
  { route: "GET /api/workspaces/[slug]/files/content", path: (f) => `/api/workspaces/${f.otherSlug}/files/content?path=matrix-files/seed.txt`, expect: nobody },
  { route: "GET /api/workspaces/[slug]/git", path: (f) => `/api/workspaces/${f.slug}/git`, expect: members },
  { route: "GET /api/workspaces/[slug]/git/diff", path: (f) => `/api/workspaces/${f.slug}/git/diff?path=matrix-git/seed.txt`, expect: members },
  { route: "GET /api/workspaces/[slug]/git/diff", path: (f) => `/api/workspaces/${f.otherSlug}/git/diff?path=matrix-git/seed.txt`, expect: nobody },
  { route: "GET /api/workspaces/[slug]/git/worktrees/[session]", path: (f) => `/api/workspaces/${f.slug}/git/worktrees/${f.sessionId}`, expect: members },
  // this workspace's session through another workspace's slug: nobody
  { route: "GET /api/workspaces/[slug]/git/worktrees/[session]", path: (f) => `/api/workspaces/${f.otherSlug}/git/worktrees/${f.sessionId}`, expect: nobody },
  // the matrix session has no worktree: members get past the role check to a 409, the rest 401/403/404
  { route: "GET /api/workspaces/[slug]/git/worktrees/[session]/diff", path: (f) => `/api/workspaces/${f.slug}/git/worktrees/${f.sessionId}/diff?path=a.txt`, expect: nobody },
  { route: "GET /api/workspaces/[slug]/settings-review", path: (f) => `/api/workspaces/${f.slug}/settings-review`, expect: owners },
  { route: "POST /api/workspaces/[slug]/settings-review", path: (f) => `/api/workspaces/${f.slug}/settings-review`, body: (f) => ({ digest: f.settingsDigest }), expect: owners },
  { route: "DELETE /api/workspaces/[slug]/settings-review", path: (f) => `/api/workspaces/${f.slug}/settings-review`, expect: owners },
  { route: "GET /api/reports", path: () => "/api/reports", expect: signedIn },
  { route: "GET /api/reports.csv", path: () => "/api/reports.csv", expect: signedIn },
  { route: "POST /api/socket-token", path: () => "/api/socket-token", body: () => ({}), expect: signedIn },
  // the session of another workspace through this workspace's slug: nobody
  { route: "GET /api/workspaces/[slug]/sessions/[session]", path: (f) => `/api/workspaces/${f.otherSlug}/sessions/${f.sessionId}`, expect: nobody },
  // the admin area: none of the five is the instance's admin (404 for all)
  { route: "GET /api/admin/users", path: () => "/api/admin/users", expect: nobody },
  { route: "GET /api/admin/audit", path: () => "/api/admin/audit", expect: nobody },
  { route: "GET /api/admin/instance", path: () => "/api/admin/instance", expect: nobody },
  { route: "PATCH /api/admin/users/[id]", path: (f) => `/api/admin/users/${f.ids.viewer}`, body: () => ({ disabled: true }), expect: nobody },
  { route: "GET /api/account", path: () => "/api/account", expect: signedIn },
  { route: "GET /api/invitations", path: (f) => `/api/invitations?workspace=${f.slug}`, expect: owners },
  // every invitation of the instance: admins only (none of these five is the admin)
  { route: "GET /api/invitations", path: () => "/api/invitations", expect: nobody },
  // a wrong current password: nobody changes a password here (it would end the cookies under test)
  { route: "POST /api/account/password", path: () => "/api/account/password", body: () => ({ currentPassword: "not-the-password", newPassword: "An0ther-long-pass" }), expect: nobody },
  { route: "PATCH /api/account", path: () => "/api/account", body: () => ({ name: "Matrix Person" }), expect: signedIn },
  // Web Push: each signed-in person reads and changes only their own settings and browsers
  { route: "GET /api/account/push", path: () => "/api/account/push", expect: signedIn },
  { route: "PATCH /api/account/push", path: () => "/api/account/push", body: () => ({ approvals: true, finishedTurns: false }), expect: signedIn },
  { route: "POST /api/account/push/subscriptions", path: () => "/api/account/push/subscriptions", body: () => ({ endpoint: `https://push.example.test/matrix/${uniqueEmail("sub")}`, keys: { p256dh: "BMatrixKey", auth: "matrixAuth" } }), expect: signedIn },
  { route: "DELETE /api/account/push/subscriptions", path: () => "/api/account/push/subscriptions", body: () => ({ endpoint: "https://push.example.test/matrix/none" }), expect: signedIn },
  { route: "POST /api/invitations", path: () => "/api/invitations", body: (f) => ({ email: uniqueEmail("m-invitee"), workspaceSlug: f.slug, role: "viewer" }), expect: owners },
  { route: "DELETE /api/invitations/[id]", path: (f) => `/api/invitations/${f.invitationId}`, expect: owners },
  { route: "PUT /api/admin/users/[id]/budget", path: (f) => `/api/admin/users/${f.ids.viewer}/budget`, body: () => ({ monthlyBudgetUsd: 5 }), expect: nobody },
  { route: "PATCH /api/workspaces/[slug]/approval-settings", path: (f) => `/api/workspaces/${f.slug}/approval-settings`, body: () => ({ approvalDeadlineSec: 600 }), expect: owners },
  { route: "PUT /api/workspaces/[slug]/approval-settings", path: (f) => `/api/workspaces/${f.slug}/approval-settings`, body: () => ({ approvalDeadlineSec: 600 }), expect: owners },
  // each attempt writes a new file, renames its own source and deletes its own target (made in beforeAll)
  { route: "PUT /api/workspaces/[slug]/files/content", path: (f) => `/api/workspaces/${f.slug}/files/content`, body: () => ({ path: matrixFile(), content: "x\n", baseVersion: null }), expect: steerers },
  { route: "POST /api/workspaces/[slug]/files", path: (f) => `/api/workspaces/${f.slug}/files`, body: () => ({ path: matrixFile(), kind: "file" }), expect: steerers },
  { route: "POST /api/workspaces/[slug]/files/rename", path: (f) => `/api/workspaces/${f.slug}/files/rename`, body: () => ({ from: `matrix-files/rename-${(renameRound += 1)}.txt`, to: matrixFile() }), expect: steerers },
  // DELETE takes its target in the query; the body (ignored by the route) only advances to the attempt's own file,
  // since `path` is also called again to describe a denial
  { route: "DELETE /api/workspaces/[slug]/files", path: (f) => `/api/workspaces/${f.slug}/files?path=matrix-files/delete-${deleteRound}.txt`, body: () => ({ attempt: (deleteRound += 1) }), expect: steerers },
  // each attempt changes a file of its own and commits (or discards) only that one
  { route: "POST /api/workspaces/[slug]/git/commit", path: (f) => `/api/workspaces/${f.slug}/git/commit`, body: (f) => ({ paths: [matrixGitFile(f, "commit")], message: "matrix commit" }), expect: steerers },
  { route: "POST /api/workspaces/[slug]/git/discard", path: (f) => `/api/workspaces/${f.slug}/git/discard`, body: (f) => ({ path: matrixGitFile(f, "discard"), confirmDelete: true }), expect: steerers },
  // owners only, and the matrix session has no worktree: the owner's attempt is a 409 after the role check
  { route: "POST /api/workspaces/[slug]/git/worktrees/[session]/merge", path: (f) => `/api/workspaces/${f.slug}/git/worktrees/${f.sessionId}/merge`, body: () => ({ strategy: "merge" }), expect: nobody },
  { route: "DELETE /api/workspaces/[slug]/git/worktrees/[session]", path: (f) => `/api/workspaces/${f.slug}/git/worktrees/${f.sessionId}`, expect: nobody },
  { route: "PUT /api/workspaces/[slug]/budget", path: (f) => `/api/workspaces/${f.slug}/budget`, body: () => ({ monthlyBudgetUsd: 100 }), expect: owners },
  // open, as it was: the matrix's session must keep starting
  { route: "PUT /api/workspaces/[slug]/network", path: (f) => `/api/workspaces/${f.slug}/network`, body: () => ({ mode: "open" }), expect: owners },
  // MCP servers (disabled, so the matrix session's spawns stay as they were): each attempt a new name
  { route: "POST /api/workspaces/[slug]/mcp", path: (f) => `/api/workspaces/${f.slug}/mcp`, body: () => ({ transport: "http", name: `matrix-${(fileSeq += 1)}`, url: "https://mcp.example.test/mcp", headers: [{ name: "Authorization", value: "Bearer matrix" }], enabled: false }), expect: owners },
  { route: "PATCH /api/workspaces/[slug]/mcp/[id]", path: (f) => `/api/workspaces/${f.slug}/mcp/${f.mcpServerId}`, body: () => ({ url: "https://mcp.example.test/other" }), expect: owners },
  { route: "DELETE /api/workspaces/[slug]/mcp/[id]", path: (f) => `/api/workspaces/${f.slug}/mcp/${f.mcpServerId}`, expect: owners },
  { route: "PATCH /api/workspaces/[slug]/members/[userId]", path: (f) => `/api/workspaces/${f.slug}/members/${f.ids.viewer}`, body: () => ({ role: "viewer" }), expect: owners },
  { route: "POST /api/workspaces", path: () => "/api/workspaces", body: () => ({ name: `Matrix ${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}` }), expect: signedIn },
  { route: "DELETE /api/workspaces/[slug]/approval-settings/rules/[ruleId]", path: (f) => `/api/workspaces/${f.slug}/approval-settings/rules/no-such-rule`, expect: nobody },
  { route: "DELETE /api/workspaces/[slug]/members/[userId]", path: (f) => `/api/workspaces/${f.slug}/members/${f.ids.spare}`, expect: owners },
  // each attempt adds the same person again: only the first (the owner's, after the removal above) can succeed
  { route: "POST /api/workspaces/[slug]/members", path: (f) => `/api/workspaces/${f.slug}/members`, body: () => ({ email: spareEmail, role: "viewer" }), expect: owners },
];

/** Routes that are not Conduit's own handlers (next-auth's) or are covered by their own specs. */
const routesCoveredElsewhere = new Set([
  "GET /api/auth/[...nextauth]",
  "POST /api/auth/[...nextauth]",
  "POST /api/signup",
  // public by design (the token is the credential): e2e/invitations.spec.ts
  "POST /api/invitations/accept",
  "POST /api/invitations/github",
]);

/** Every "METHOD /api/template" that app/api exports. */
function listRoutes(dir = path.join(repoRoot, "app", "api")): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir)) {
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) found.push(...listRoutes(full));
    else if (entry === "route.ts") {
      const template = `/${path.relative(path.join(repoRoot, "app"), dir).split(path.sep).join("/")}`;
      const source = readFileSync(full, "utf8");
      for (const m of source.matchAll(/export (?:async function|const) (GET|POST|PUT|PATCH|DELETE)\b/g)) found.push(`${m[1]} ${template}`);
      for (const m of source.matchAll(/export \{([^}]*)\}/g)) {
        for (const name of m[1]!.split(",").map((n) => n.trim().split(/\s+as\s+/).pop()!)) if (/^(GET|POST|PUT|PATCH|DELETE)$/.test(name)) found.push(`${name} ${template}`);
      }
    }
  }
  return found;
}

const repoRoot = path.resolve(import.meta.dirname, "..", "..");
let spareEmail = "";
let fileSeq = 0;
let renameRound = 0;
let deleteRound = 0;
/** Attempts per row (anonymous, outsider, viewer, editor, owner). */
const attemptsPerRow = 5;
const matrixFile = () => `matrix-files/new-${Date.now().toString(36)}-${(fileSeq += 1)}.txt`;
/** A new untracked file in the matrix repository, for one commit or discard attempt. */
const matrixGitFile = (f: Fixture, kind: string) => {
  const rel = `matrix-git/${kind}-${(fileSeq += 1)}.txt`;
  writeFileSync(path.join(f.rootPath, rel), `${kind}\n`);
  return rel;
};
const gitSetup = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.name=Matrix", "-c", "user.email=matrix@example.test", "-c", "init.defaultBranch=main", ...args], {
    cwd,
    env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" },
  });
const contexts = new Map<Who, APIRequestContext>();
const fixture = {} as Fixture;


test.describe.configure({ mode: "serial" });

test.beforeAll(async ({ baseURL }) => {
  test.setTimeout(120_000);
  const base = baseURL!;
  fixture.baseURL = base;
  // An account first, so none of the five below is the instance's first (admin) account.
  await (await signUpAndIn(base, uniqueEmail("matrix-first"))).dispose();
  const emails = { owner: uniqueEmail("m-owner"), editor: uniqueEmail("m-editor"), viewer: uniqueEmail("m-viewer"), outsider: uniqueEmail("m-outsider") };
  spareEmail = uniqueEmail("m-spare");
  for (const who of ["owner", "editor", "viewer", "outsider"] as const) contexts.set(who, await signUpAndIn(base, emails[who]));
  await (await signUpAndIn(base, spareEmail)).dispose();
  contexts.set("anonymous", await newClient(base));

  const owner = contexts.get("owner")!;
  const ws = await owner.post("/api/workspaces", { data: { name: `Matrix ${Date.now().toString(36)}` } });
  expect(ws.status(), await ws.text()).toBe(201);
  ({ slug: fixture.slug, rootPath: fixture.rootPath } = ((await ws.json()) as { data: { slug: string; rootPath: string } }).data);
  // the workspace is a repository with one commit, so the git routes act for real
  mkdirSync(path.join(fixture.rootPath, "matrix-git"));
  writeFileSync(path.join(fixture.rootPath, "matrix-git", "seed.txt"), "seed\n");
  gitSetup(fixture.rootPath, "init", "-q");
  gitSetup(fixture.rootPath, "add", "-A");
  gitSetup(fixture.rootPath, "commit", "-q", "-m", "matrix seed");
  for (const [email, role] of [[emails.editor, "editor"], [emails.viewer, "viewer"], [spareEmail, "viewer"]] as const) {
    const added = await owner.post(`/api/workspaces/${fixture.slug}/members`, { data: { email, role } });
    expect(added.status(), await added.text()).toBe(201);
  }
  for (const file of ["seed", ...Array.from({ length: attemptsPerRow }, (_, i) => [`rename-${i + 1}`, `delete-${i + 1}`]).flat()]) {
    const made = await owner.post(`/api/workspaces/${fixture.slug}/files`, { data: { path: `matrix-files/${file}.txt`, kind: "file", content: "seed\n" } });
    expect(made.status(), await made.text()).toBe(201);
  }
  const other = await contexts.get("outsider")!.post("/api/workspaces", { data: { name: `Elsewhere ${Date.now().toString(36)}` } });
  fixture.otherSlug = ((await other.json()) as { data: { slug: string } }).data.slug;
  fixture.ids = {
    owner: await userIdOf(owner, fixture.slug, emails.owner),
    editor: await userIdOf(owner, fixture.slug, emails.editor),
    viewer: await userIdOf(owner, fixture.slug, emails.viewer),
    spare: await userIdOf(owner, fixture.slug, spareEmail),
    outsider: "",
  };
  const invitation = await owner.post("/api/invitations", { data: { email: uniqueEmail("m-invited"), workspaceSlug: fixture.slug, role: "editor" } });
  expect(invitation.status(), await invitation.text()).toBe(201);
  fixture.invitationId = ((await invitation.json()) as { data: { invitation: { id: string } } }).data.invitation.id;
  const mcpServer = await owner.post(`/api/workspaces/${fixture.slug}/mcp`, { data: { transport: "http", name: "matrix", url: "https://mcp.example.test/mcp", enabled: false } });
  expect(mcpServer.status(), await mcpServer.text()).toBe(201);
  fixture.mcpServerId = ((await mcpServer.json()) as { data: { id: string } }).data.id;
  const review = await owner.get(`/api/workspaces/${fixture.slug}/settings-review`);
  fixture.settingsDigest = ((await review.json()) as { data: { digest: string } }).data.digest;

  // one live session with a few events, made by the owner
  const socket = await connect(base, await cookieHeader(owner));
  if (socket instanceof Error) throw socket;
  try {
    const created = await emit(socket, "session:create", { workspace: fixture.slug, mode: "default", commandId: commandId() });
    expect(created.ok, JSON.stringify(created)).toBe(true);
    fixture.sessionId = (created as { data: { id: string } }).data.id;
    // a prompt with an image (a 1×1 PNG), whose image the image route serves
    const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
    const prompted = await emit(socket, "session:prompt", { sessionId: fixture.sessionId, text: "[scenario:none] a picture", images: [{ mediaType: "image/png", data: png }], commandId: commandId() });
    expect(prompted.ok, JSON.stringify(prompted)).toBe(true);
    fixture.promptSeq = (prompted as { data: { seq: number } }).data.seq;
    const event = await emit(socket, "session:fetch-event", { sessionId: fixture.sessionId, seq: fixture.promptSeq });
    fixture.imageId = (event as { data: { payload: { images: { id: string }[] } } }).data.payload.images[0]!.id;
  } finally {
    socket.close();
  }
});

test.afterAll(async () => {
  for (const client of contexts.values()) await client.dispose();
});

test("every route handler has a row in the matrix", () => {
  const covered = new Set(routeCases.map((c) => c.route));
  const missing = listRoutes().filter((r) => !covered.has(r) && !routesCoveredElsewhere.has(r));
  expect(missing, "route handlers without an expectation in e2e/tenant-matrix.spec.ts").toEqual([]);
});

test("routes × owner, editor, viewer, non-member, signed-out: no unexpected allow", async () => {
  test.setTimeout(120_000);
  const unexpected: string[] = [];
  let attempts = 0;
  for (const c of routeCases) {
    // the owner tries last, so a state change it is allowed to make cannot decide the others' cells
    for (const who of ["anonymous", "outsider", "viewer", "editor", "owner"] as const) {
      const client = contexts.get(who)!;
      const method = c.route.split(" ")[0]!;
      const body = c.body?.(fixture);
      const res = await client.fetch(c.path(fixture), { method, ...(body === undefined ? {} : { data: body }) });
      attempts += 1;
      const allowed = res.status() >= 200 && res.status() < 300;
      if (c.expect[who] === "deny") recordAttempt({ probe: "matrix/routes", check: "S3", attack: `${who} ${method} ${c.route}`, kind: "access", allowed, detail: `HTTP ${res.status()}` });
      if (allowed !== (c.expect[who] === "allow")) {
        unexpected.push(`${who} ${method} ${c.path(fixture)} → ${res.status()} (expected ${c.expect[who]}) ${(await res.text()).slice(0, 160)}`);
      } else if (!allowed) {
        // a denial says so with a status that reveals nothing more than it must
        expect([401, 403, 404, 409], `${who} ${method} ${c.path(fixture)}`).toContain(res.status());
        if (who === "outsider" && c.path(fixture).includes(fixture.slug)) expect(res.status(), "a non-member learns nothing: 404").toBe(404);
        if (who === "anonymous" && c.path(fixture) !== "/api/health") expect(res.status()).toBe(401);
      }
    }
  }
  test.info().annotations.push({ type: "routes", description: `attempts=${attempts} unexpected=${unexpected.length}` });
  expect(unexpected).toEqual([]);
});

test("a signed-out client cannot open a socket", async () => {
  const result = await connect(fixture.baseURL, undefined);
  recordAttempt({ probe: "matrix/socket-no-cookie", check: "S1", attack: "socket handshake without a session cookie", kind: "access", allowed: !(result instanceof Error) });
  if (!(result instanceof Error)) result.close();
  expect(result).toBeInstanceOf(Error);
});

test("socket commands × owner, editor, viewer, non-member: no unexpected allow", async () => {
  test.setTimeout(120_000);
  const { sessionId, slug } = fixture;
  // `authorizedWhen`: an error code that only comes after the role check passed (the payload is
  // refused on its content), so for allowed roles it counts as allowed
  const cases: { event: string; payload: () => unknown; expect: Record<Who, Expect>; authorizedWhen?: string }[] = [
    { event: "session:rewind", payload: () => ({ sessionId, promptSeq: 1, commandId: commandId() }), expect: steerers },
    { event: "changes:revert-file", payload: () => ({ sessionId, scope: { session: true }, path: "../escape.txt", commandId: commandId() }), expect: steerers, authorizedWhen: "invalid_payload" },
    { event: "changes:revert-hunk", payload: () => ({ sessionId, scope: { session: true }, path: "../escape.txt", hunk: 0, commandId: commandId() }), expect: steerers, authorizedWhen: "invalid_payload" },
    { event: "session:subscribe", payload: () => ({ sessionId, afterSeq: 0 }), expect: members },
    { event: "session:fetch-event", payload: () => ({ sessionId, seq: 1 }), expect: members },
    { event: "session:events-before", payload: () => ({ sessionId, beforeSeq: 2 }), expect: members },
    { event: "workspace:watch", payload: () => ({ workspace: slug }), expect: members },
    { event: "session:list-models", payload: () => ({ sessionId }), expect: members },
    { event: "models:list", payload: () => ({ workspace: slug }), expect: members },
    { event: "session:prompt", payload: () => ({ sessionId, text: "hello from the matrix", commandId: commandId() }), expect: steerers },
    // these ask the live CLI: right after a prompt (which starts one) it is there for everyone's turn
    { event: "session:context-usage", payload: () => ({ sessionId }), expect: members },
    { event: "session:file-suggestions", payload: () => ({ sessionId, query: "seed" }), expect: members },
    { event: "session:slash-commands", payload: () => ({ sessionId }), expect: members },
    { event: "session:mcp-status", payload: () => ({ sessionId }), expect: members },
    { event: "session:set-thinking", payload: () => ({ sessionId, maxThinkingTokens: 4000, commandId: commandId() }), expect: steerers },
    { event: "session:cancel-queued", payload: () => ({ sessionId, promptSeq: fixture.promptSeq, commandId: commandId() }), expect: steerers },
    { event: "session:set-mode", payload: () => ({ sessionId, mode: "default", commandId: commandId() }), expect: steerers },
    { event: "session:interrupt", payload: () => ({ sessionId, commandId: commandId() }), expect: steerers },
    { event: "session:create", payload: () => ({ workspace: slug, mode: "default", commandId: commandId() }), expect: steerers },
    // in a worktree of its own (the matrix workspace is a repository): the same rights
    { event: "session:create", payload: () => ({ workspace: slug, mode: "default", worktree: true, commandId: commandId() }), expect: steerers },
    { event: "approval:list", payload: () => ({}), expect: signedIn },
    { event: "session:rename", payload: () => ({ sessionId, title: "Matrix title", commandId: commandId() }), expect: steerers },
    { event: "session:archive", payload: () => ({ sessionId, archived: false, commandId: commandId() }), expect: steerers },
  ];
  const unexpected: string[] = [];
  const created: string[] = [];
  for (const who of ["outsider", "viewer", "editor", "owner"] as const) {
    const socket = await connect(fixture.baseURL, await cookieHeader(contexts.get(who)!));
    if (socket instanceof Error) throw new Error(`${who} could not connect: ${socket.message}`);
    try {
      for (const c of cases) {
        const answer = await emit(socket, c.event, c.payload());
        const ack = !answer.ok && c.expect[who] === "allow" && answer.error.code === c.authorizedWhen ? { ok: true as const, data: undefined } : answer;
        if (c.expect[who] === "deny") recordAttempt({ probe: "matrix/socket-commands", check: "S4", attack: `${who} ${c.event}`, kind: "access", allowed: ack.ok, detail: ack.ok ? "ok" : ack.error.code });
        if (ack.ok !== (c.expect[who] === "allow")) unexpected.push(`${who} ${c.event} → ${JSON.stringify(ack).slice(0, 200)} (expected ${c.expect[who]})`);
        else if (!ack.ok) {
          expect(["not_found", "forbidden"], `${who} ${c.event}`).toContain(ack.error.code);
          if (who === "outsider") expect(ack.error.code, `${c.event}: a non-member learns nothing`).toBe("not_found");
        } else if (c.event === "session:create") created.push((ack.data as { id: string }).id);
        if (ack.ok && c.event === "approval:list") {
          // the list is one's own queue: nothing of a workspace one is not a member of
          const text = JSON.stringify(ack.data);
          if (who === "outsider") expect(text).not.toContain(sessionId);
        }
      }
      // a background task stop: past authorization only for steerers (then the CLI answers: no such task)
      {
        const ack = await emit(socket, "session:stop-task", { sessionId, taskId: "no-such-task", commandId: commandId() });
        const passed = ack.ok || !["not_found", "forbidden"].includes(ack.error.code);
        if (steerers[who] === "deny") recordAttempt({ probe: "matrix/socket-commands", check: "S4", attack: `${who} session:stop-task`, kind: "access", allowed: passed });
        if (passed !== (steerers[who] === "allow")) unexpected.push(`${who} session:stop-task → ${JSON.stringify(ack).slice(0, 200)}`);
      }
      // delete: owners only; the owner deletes a session made by this test, the others try the fixture's
      {
        const target = who === "owner" ? created.shift() : sessionId;
        if (target) {
          const ack = await emit(socket, "session:delete", { sessionId: target, confirm: target, commandId: commandId() });
          if (owners[who] === "deny") recordAttempt({ probe: "matrix/socket-commands", check: "S4", attack: `${who} session:delete`, kind: "access", allowed: ack.ok });
          if (ack.ok !== (owners[who] === "allow")) unexpected.push(`${who} session:delete → ${JSON.stringify(ack).slice(0, 200)}`);
          else if (!ack.ok && who === "outsider") expect(ack.error.code).toBe("not_found");
        }
      }
      // the session's stop comes last: only steerers, and the owner's actually stops it
      for (const id of [...created, sessionId]) {
        const ack = await emit(socket, "session:stop", { sessionId: id, commandId: commandId() });
        const expected = steerers[who] === "allow";
        if (!expected) recordAttempt({ probe: "matrix/socket-commands", check: "S4", attack: `${who} session:stop`, kind: "access", allowed: ack.ok });
        if (ack.ok !== expected) unexpected.push(`${who} session:stop ${id} → ${JSON.stringify(ack).slice(0, 200)}`);
        if (!expected) break;
      }
    } finally {
      socket.close();
    }
  }
  expect(unexpected).toEqual([]);
});
