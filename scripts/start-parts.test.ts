import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseEnv } from "../server/env/env";
import { missingForParts, parseStartArgs, runs, StartArgsError, type PartName } from "./start-parts";
import { portsToBind, probeHost, resolveStartSettings } from "./start-settings";

const root = path.resolve(import.meta.dirname, "..");
const SECRET = "s".repeat(40);
const only = (...parts: PartName[]) => new Set(parts);

describe("parseStartArgs", () => {
  it("runs every part without --only, as npm start always did", () => {
    expect(parseStartArgs([])).toEqual({ dev: false, only: undefined });
    expect(parseStartArgs(["--dev"])).toEqual({ dev: true, only: undefined });
  });

  it("takes --only with one part, a comma separated list, the = form, or the flag repeated", () => {
    expect(parseStartArgs(["--only", "sidecar"]).only).toEqual(only("sidecar"));
    expect(parseStartArgs(["--only", "edge,web"]).only).toEqual(only("edge", "web"));
    expect(parseStartArgs(["--only=edge, sidecar"]).only).toEqual(only("edge", "sidecar"));
    expect(parseStartArgs(["--only", "edge", "--dev", "--only", "web"])).toEqual({ dev: true, only: only("edge", "web") });
  });

  it("names an unknown part and the valid ones", () => {
    expect(() => parseStartArgs(["--only", "edge,proxy"])).toThrow(new StartArgsError('--only: unknown part "proxy"; the parts are edge, web, sidecar'));
  });

  it("refuses --only without parts, and unknown arguments", () => {
    expect(() => parseStartArgs(["--only"])).toThrow(/--only needs one or more parts: edge, web, sidecar/);
    expect(() => parseStartArgs(["--only", "--dev"])).toThrow(/--only needs one or more parts/);
    expect(() => parseStartArgs(["--only="])).toThrow(/--only needs one or more parts/);
    expect(() => parseStartArgs(["--onyl", "edge"])).toThrow(/unknown argument "--onyl"/);
  });

  it("says which parts run", () => {
    expect(PARTS_RUN(parseStartArgs([]))).toEqual(["edge", "web", "sidecar"]);
    expect(PARTS_RUN(parseStartArgs(["--only", "web"]))).toEqual(["web"]);
  });
});

const PARTS_RUN = (args: ReturnType<typeof parseStartArgs>) => (["edge", "web", "sidecar"] as const).filter((p) => runs(args, p));

describe("missingForParts", () => {
  it("asks nothing of a complete group: every default names this machine", () => {
    expect(missingForParts(parseEnv({}), undefined)).toEqual([]);
  });

  it("asks a lone edge for the shared secret and where the web app and the sidecars are", () => {
    const missing = missingForParts(parseEnv({}), only("edge"));
    expect(missing).toHaveLength(3);
    expect(missing[0]).toMatch(/^NEXTAUTH_SECRET is required with --only/);
    expect(missing[1]).toMatch(/^CONDUIT_WEB_UPSTREAM is required for an edge without its web app/);
    expect(missing[2]).toMatch(/^CONDUIT_SIDECAR_UPSTREAMS is required for an edge without its sidecar/);
    const complete = parseEnv({ NEXTAUTH_SECRET: SECRET, CONDUIT_WEB_UPSTREAM: "http://10.0.0.2:3101", CONDUIT_SIDECAR_UPSTREAMS: "http://10.0.0.3:3102" });
    expect(missingForParts(complete, only("edge"))).toEqual([]);
  });

  it("asks an edge beside its web app only for the sidecars", () => {
    const env = parseEnv({ NEXTAUTH_SECRET: SECRET, DATABASE_URL: "postgresql://c:p@db:5432/conduit" });
    expect(missingForParts(env, only("edge", "web"))).toEqual([expect.stringMatching(/^CONDUIT_SIDECAR_UPSTREAMS is required/)]);
  });

  it("asks a lone sidecar or web app for the public URL and the one database both use", () => {
    const missing = missingForParts(parseEnv({ NEXTAUTH_SECRET: SECRET }), only("sidecar"));
    expect(missing).toEqual([expect.stringMatching(/^CONDUIT_PUBLIC_URL is required without the edge/), expect.stringMatching(/^DATABASE_URL is required when the web app and the sidecar are started separately/)]);
    const set = parseEnv({ NEXTAUTH_SECRET: SECRET, CONDUIT_PUBLIC_URL: "https://conduit.example.com", DATABASE_URL: "postgresql://c:p@db:5432/conduit" });
    expect(missingForParts(set, only("sidecar"))).toEqual([]);
    expect(missingForParts(set, only("web"))).toEqual([]);
    // web and sidecar together on one machine may keep the default SQLite file
    expect(missingForParts(parseEnv({ NEXTAUTH_SECRET: SECRET, CONDUIT_PUBLIC_URL: "https://conduit.example.com" }), only("web", "sidecar"))).toEqual([]);
  });
});

describe("portsToBind with --only", () => {
  const names = (source: Record<string, string>, parts?: Set<PartName>) =>
    portsToBind(resolveStartSettings(parseEnv(source), root), parts).map((p) => `${p.variable}@${p.host}`);

  it("binds only the ports of the parts that run, the demo model with the sidecar", () => {
    expect(names({}, only("edge"))).toEqual(["PORT@127.0.0.1"]);
    expect(names({ CONDUIT_SIDECAR_HOST: "0.0.0.0" }, only("sidecar"))).toEqual(["CONDUIT_SIDECAR_PORT@0.0.0.0", "CONDUIT_MODEL_PORT@127.0.0.1"]);
    expect(names({ ANTHROPIC_API_KEY: "sk", CONDUIT_NEXT_HOST: "10.0.0.2" }, only("web", "sidecar"))).toEqual(["CONDUIT_NEXT_PORT@10.0.0.2", "CONDUIT_SIDECAR_PORT@127.0.0.1"]);
  });

  it("probes a wildcard bind on loopback", () => {
    expect(probeHost("0.0.0.0")).toBe("127.0.0.1");
    expect(probeHost("::")).toBe("127.0.0.1");
    expect(probeHost("10.0.0.2")).toBe("10.0.0.2");
  });
});
