// The "or remember" options of an approval card: each CLI suggestion as a phrase that reads after
// "or remember" and before its scope ("in this session"), never "or always allow Always allow …".
import { describe, expect, it } from "vitest";
import { rememberOptionsOf } from "./approval-views";

describe("rememberOptionsOf", () => {
  it("words each kind of suggestion as what is remembered", () => {
    const options = rememberOptionsOf([
      { type: "addRules", rules: [{ toolName: "Bash", ruleContent: "npm test:*" }], behavior: "allow", destination: "localSettings" },
      { type: "setMode", mode: "acceptEdits", destination: "session" },
      { type: "addDirectories", directories: ["/srv/shared"], destination: "session" },
      { type: "addRules", rules: [{ toolName: "WebFetch" }], behavior: "deny", destination: "session" },
    ]);
    expect(options.map((o) => o.label)).toEqual([
      "allow Bash(npm test:*)",
      "accept-edits mode (file edits without asking)",
      "access to /srv/shared",
      "deny WebFetch",
    ]);
    expect(options.map((o) => o.index)).toEqual([0, 1, 2, 3]);
    expect(options[0]!.workspaceScope).toBe(true);
    expect(options[1]!.workspaceScope).toBe(false);
  });
});
