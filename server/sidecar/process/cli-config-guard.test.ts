// The guard's pure part; its file work through the config directory's door is in
// cli-config-guard.integration.test.ts.
import { describe, expect, it } from "vitest";
import { withProjectTrust, withoutProjectGrants } from "./cli-config-guard";

describe("withoutProjectGrants", () => {
  it("removes trust and allowed tools from every project, keeping the rest", () => {
    const config = {
      numStartups: 3,
      projects: { "/ws/a": { hasTrustDialogAccepted: true, allowedTools: ["Bash"], lastCost: 1 }, "/ws/b": { lastCost: 2 } },
    };
    expect(withoutProjectGrants(config)).toEqual({
      changed: true,
      config: { numStartups: 3, projects: { "/ws/a": { lastCost: 1 }, "/ws/b": { lastCost: 2 } } },
    });
  });

  it("leaves a config without grants (or not an object) as it is", () => {
    const config = { projects: { "/ws": { lastCost: 1 } } };
    expect(withoutProjectGrants(config)).toEqual({ config, changed: false });
    expect(withoutProjectGrants(null)).toEqual({ config: null, changed: false });
    expect(withoutProjectGrants([1])).toEqual({ config: [1], changed: false });
  });
});

describe("withProjectTrust", () => {
  it("marks only the workspace's project trusted and keeps everything else", () => {
    const before = { userID: "u", projects: { "/ws/a": { allowedTools: [], history: [1] }, "/ws/b": { x: 1 } } };
    const after = withProjectTrust(before, "/ws/a") as typeof before & { projects: Record<string, Record<string, unknown>> };
    expect(after.userID).toBe("u");
    expect(after.projects["/ws/a"]).toEqual({ allowedTools: [], history: [1], hasTrustDialogAccepted: true });
    expect(after.projects["/ws/b"]).toEqual({ x: 1 });
    // and the guard takes it away again for an untrusted spawn
    expect((withoutProjectGrants(after).config as typeof after).projects["/ws/a"]).toEqual({ history: [1] });
  });

  it("starts from nothing when there is no usable config", () => {
    expect(withProjectTrust(null, "/ws/a")).toEqual({ projects: { "/ws/a": { hasTrustDialogAccepted: true } } });
  });
});
