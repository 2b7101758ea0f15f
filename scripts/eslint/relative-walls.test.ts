// The import walls hold for relative imports too: ESLint's API with the project's own
// eslint.config.mjs, on fixture sources placed (by path only) in each layer.
import path from "node:path";
import { ESLint } from "eslint";
import { beforeAll, describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "../..");
let eslint: ESLint;

beforeAll(() => {
  eslint = new ESLint({ cwd: root });
});

/** The wall findings (both rules) for `code` as if it were the file at `file`. */
async function walls(file: string, code: string): Promise<{ rule: string | null; message: string }[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(root, file) });
  return result!.messages
    .filter((m) => m.ruleId === "conduit/relative-walls" || m.ruleId === "@typescript-eslint/no-restricted-imports")
    .map((m) => ({ rule: m.ruleId, message: m.message }));
}

describe("import walls for relative imports", () => {
  it("refuses a relative import from server/domain into server/db", async () => {
    const found = await walls("server/domain/approval/fixture.ts", `import { type Db } from "../../db/client";\nexport type X = Db;\n`);
    expect(found).toEqual([
      {
        rule: "conduit/relative-walls",
        message: "'../../db/client' is @/server/db/client: server/domain imports only server/shared and server/domain",
      },
    ]);
  });

  it("refuses the same crossing written as an @/ path (the wall it mirrors)", async () => {
    const found = await walls("server/domain/approval/fixture.ts", `import { type Db } from "@/server/db/client";\nexport type X = Db;\n`);
    expect(found.map((f) => f.rule)).toEqual(["@typescript-eslint/no-restricted-imports"]);
  });

  it("refuses a re-export and a dynamic import across a wall", async () => {
    const reexport = await walls("server/domain/approval/fixture.ts", `export * from "../../sidecar/session/session-hub";\n`);
    expect(reexport.map((f) => f.rule)).toEqual(["conduit/relative-walls"]);
    const dynamic = await walls("server/sidecar/session/fixture.ts", `export const load = () => import("../../web/auth");\n`);
    expect(dynamic.map((f) => f.rule)).toEqual(["conduit/relative-walls"]);
  });

  it("refuses the sidecar importing the web app through ../", async () => {
    const found = await walls("server/sidecar/session/fixture.ts", `import { findCurrentUser } from "../../web/auth";\nexport const f = findCurrentUser;\n`);
    expect(found.map((f) => f.rule)).toEqual(["conduit/relative-walls"]);
  });

  it("allows relative imports inside a layer and into what the layer may import", async () => {
    expect(await walls("server/domain/approval/fixture.ts", `import { answerFor } from "./decision-answer";\nimport { AppError } from "../../shared/errors/app-error";\nexport const x = [answerFor, AppError];\n`)).toEqual([]);
    expect(await walls("server/workspace-fs/fixture.ts", `import * as p from "./workspace-path";\nexport const x = p;\n`)).toEqual([]);
    expect(await walls("server/sidecar/session/fixture.ts", `import { findSession } from "../../db/sessions";\nexport const x = findSession;\n`)).toEqual([]);
  });

  it("lets components import wire types, and only types, relatively", async () => {
    const types = `import type { SessionView } from "../server/shared/wire/session";\nexport type V = SessionView;\n`;
    expect(await walls("components/fixture.ts", types)).toEqual([]);
    const value = `import { ZPrompt } from "../server/shared/wire/session";\nexport const z = ZPrompt;\n`;
    expect((await walls("components/fixture.ts", value)).map((f) => f.rule)).toEqual(["conduit/relative-walls"]);
  });
});
