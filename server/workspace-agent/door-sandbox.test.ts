import { describe, expect, it } from "vitest";
import { buildDoorSandboxArgv, doorEnv } from "./door-sandbox";

const system = [
  { path: "/usr", kind: "dir" as const },
  { path: "/bin", kind: "symlink" as const, target: "usr/bin" },
  { path: "/etc/passwd", kind: "file" as const },
];

const base = { system, readOnly: ["/opt/door/door.mjs"], readWrite: ["/srv/ws/a"], hidden: [], file: "/usr/bin/node", args: ["/opt/door/door.mjs", "{}"] };

describe("a door's sandbox", () => {
  it("unshares every namespace, runs unprivileged without user namespaces below, drops capabilities", () => {
    const argv = buildDoorSandboxArgv(base);
    expect(argv.slice(0, 11)).toEqual(["--unshare-all", "--unshare-user", "--disable-userns", "--uid", "1000", "--gid", "1000", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]);
    expect(argv).not.toContain("--share-net");
  });

  it("shows the system read-only, its scope read-write, and runs the program last", () => {
    const argv = buildDoorSandboxArgv(base).join(" ");
    expect(argv).toContain("--ro-bind /usr /usr");
    expect(argv).toContain("--symlink usr/bin /bin");
    expect(argv).toContain("--ro-bind /opt/door/door.mjs /opt/door/door.mjs");
    expect(argv).toContain("--bind /srv/ws/a /srv/ws/a");
    expect(argv.endsWith("--chdir / -- /usr/bin/node /opt/door/door.mjs {}")).toBe(true);
  });

  it("covers nested workspaces with a tmpfs after binding the workspace", () => {
    const argv = buildDoorSandboxArgv({ ...base, hidden: ["/srv/ws/a/inner"] });
    expect(argv.indexOf("--tmpfs", argv.indexOf("/srv/ws/a"))).toBe(argv.indexOf("/srv/ws/a/inner") - 1);
    expect(() => buildDoorSandboxArgv({ ...base, hidden: ["/srv/other"] })).toThrow(/inside a read-write one/);
    expect(() => buildDoorSandboxArgv({ ...base, hidden: ["/srv/ws/a"] })).toThrow(/inside a read-write one/);
  });

  it("refuses relative, unnormalised and root paths, and a read-write directory over or under the system", () => {
    expect(() => buildDoorSandboxArgv({ ...base, readWrite: ["srv/ws"] })).toThrow(/absolute/);
    expect(() => buildDoorSandboxArgv({ ...base, readWrite: ["/srv/ws/../x"] })).toThrow(/normalized/);
    expect(() => buildDoorSandboxArgv({ ...base, readWrite: ["/"] })).toThrow(/other than \//);
    expect(() => buildDoorSandboxArgv({ ...base, readWrite: ["/usr/src/app/ws"] })).toThrow(/apart from the system/);
  });

  it("gives the door an environment of its own", () => {
    expect(doorEnv("/home/door")).toEqual({ PATH: "/usr/local/bin:/usr/bin:/bin", HOME: "/home/door", TMPDIR: "/tmp", LANG: "C", LC_ALL: "C", NODE_ENV: "production" });
  });
});
