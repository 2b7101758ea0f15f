// Lint rules, and the import walls between layers (docs/ARCHITECTURE.md, "Who may import whom").
import js from "@eslint/js";
import tseslint from "typescript-eslint";
import { relativeWalls } from "./scripts/eslint/relative-walls.mjs";

const root = import.meta.dirname;
// The walls below name `@/` paths; conduit/relative-walls holds them for relative imports too.
const conduit = { rules: { "relative-walls": relativeWalls } };

const node = { group: ["node:*", "fs", "path", "child_process", "http", "net", "os"], message: "this layer is pure: no I/O modules" };
const wall = (names, message) => ({ group: names, message });

// Issue 36's rule: outside a sandbox no Conduit process touches workspace content; only the door
// (server/workspace-agent, whose processes run sandboxed to one workspace) imports the layers that do.
const doorOnly = wall(
  ["@/server/workspace-fs", "@/server/workspace-fs/*", "@/server/workspace-git", "@/server/workspace-git/*", "@/server/workspace-changes", "@/server/workspace-changes/*", "@/server/workspace-settings", "@/server/workspace-settings/*"],
  "only server/workspace-agent (the workspace door) may import the layers that touch workspace content: call workspaceDoor() from @/server/workspace-agent",
);

const layers = [
  {
    // everything in server/ that no layer below names (env, metrics, the model server…)
    files: ["server/**/*.ts"],
    patterns: [],
  },
  {
    // the workspace door: the one part that runs the workspace layers (in its sandboxed processes); nothing of either process
    files: ["server/workspace-agent/**/*.ts"],
    patterns: [wall(["@/server/sidecar/*", "@/server/web/*", "@/server/edge-proxy/*", "@/server/db/*", "@/app/*", "@/components/*", "@/generated/*"], "the workspace door imports neither process, the database nor the UI")],
    door: true,
  },
  {
    // a workspace's own Claude settings read for review: node I/O, the pure settings domain
    files: ["server/workspace-settings/**/*.ts"],
    patterns: [wall(["@/server/*", "!@/server/shared", "!@/server/domain", "@/app/*", "@/components/*", "@/generated/*"], "server/workspace-settings imports only server/shared and server/domain")],
    door: true,
  },
  {
    files: ["server/shared/**/*.ts"],
    patterns: [node, wall(["@/server/*", "!@/server/shared", "@/app/*", "@/components/*", "@/generated/*"], "server/shared imports only server/shared")],
    pure: true,
  },
  {
    files: ["server/domain/**/*.ts"],
    patterns: [
      node,
      wall(["@/server/db/*", "@/server/sidecar/*", "@/server/web/*", "@/server/edge-proxy/*", "@/server/env/*", "@/app/*", "@/components/*", "@/generated/*"], "server/domain imports only server/shared and server/domain"),
    ],
    pure: true,
  },
  {
    // the file layer both processes share: node I/O, but nothing of either process
    files: ["server/workspace-fs/**/*.ts"],
    patterns: [wall(["@/server/*", "!@/server/shared", "@/app/*", "@/components/*", "@/generated/*"], "server/workspace-fs imports only server/shared")],
    door: true,
  },
  {
    // git for the workspace: node I/O and the shared file layer, nothing of either process
    files: ["server/workspace-git/**/*.ts"],
    patterns: [wall(["@/server/*", "!@/server/shared", "!@/server/workspace-fs", "@/app/*", "@/components/*", "@/generated/*"], "server/workspace-git imports only server/shared and server/workspace-fs")],
    door: true,
  },
  {
    // a workspace's shadow repository and taking changes back: node I/O and the file layer, nothing of either process
    files: ["server/workspace-changes/**/*.ts"],
    patterns: [wall(["@/server/*", "!@/server/shared", "!@/server/workspace-fs", "@/app/*", "@/components/*", "@/generated/*"], "server/workspace-changes imports only server/shared and server/workspace-fs")],
    door: true,
  },
  {
    // Web Push both processes share (VAPID keys; sending): below the processes, like server/db
    files: ["server/push/**/*.ts"],
    patterns: [wall(["@/server/sidecar/*", "@/server/web/*", "@/server/edge-proxy/*", "@/app/*", "@/components/*"], "server/push is below the processes")],
  },
  {
    // Secrets at rest (the instance key; sealing): both processes use it, it imports nothing of theirs
    files: ["server/secrets/**/*.ts"],
    patterns: [wall(["@/server/*", "!@/server/shared", "@/app/*", "@/components/*", "@/generated/*"], "server/secrets imports only server/shared")],
  },
  {
    files: ["server/edge-proxy/**/*.ts"],
    patterns: [wall(["@/server/sidecar/*", "@/server/web/*", "@/server/db/*", "@/server/domain/*", "@/app/*", "@/components/*"], "the edge proxy stands alone: it may import server/shared and server/env only")],
  },
  {
    files: ["server/sidecar/**/*.ts"],
    patterns: [wall(["@/server/web/*", "@/server/edge-proxy/*", "@/app/*", "@/components/*"], "the sidecar never imports the web app or the edge")],
  },
  {
    files: ["server/db/**/*.ts"],
    patterns: [wall(["@/server/sidecar/*", "@/server/web/*", "@/server/edge-proxy/*", "@/app/*", "@/components/*"], "server/db is below the processes")],
  },
  {
    files: ["server/web/**/*.ts", "app/**/*.ts", "app/**/*.tsx"],
    patterns: [wall(["@/server/sidecar/*", "@/server/edge-proxy/*"], "the web app never imports the sidecar or the edge")],
  },
];

const componentPatterns = [
  { group: ["@/server/*", "!@/server/shared"], message: "components import only types from server/shared/wire" },
  { group: ["@/server/shared/*", "!@/server/shared/wire"], message: "components import only types from server/shared/wire" },
  { group: ["@/server/shared/wire/*"], allowTypeImports: true, message: "components import only types from server/shared/wire" },
];

export default tseslint.config(
  { ignores: ["node_modules/", ".next/", "generated/", "data/", "public/", "test-results/", "playwright-report/", "next-env.d.ts", "**/*.mjs", "server/edge-proxy/deno.ts"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" }],
      "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "inline-type-imports" }],
      "no-restricted-syntax": ["error", { selector: "TSEnumDeclaration", message: "use an `as const` object instead of enum" }],
    },
  },
  ...layers.map(({ files, patterns: own, pure, door }) => ({ files, patterns: door ? own : [...own, doorOnly], pure })).map(({ files, patterns, pure }) => ({
    files,
    plugins: { conduit },
    rules: {
      "@typescript-eslint/no-restricted-imports": ["error", { patterns }],
      "conduit/relative-walls": ["error", { root, own: files.map((glob) => glob.split("/**")[0]), patterns }],
      ...(pure
        ? {
            "no-restricted-properties": ["error", { object: "process", property: "env", message: "pure layers take configuration as arguments" }],
          }
        : {}),
    },
  })),
  {
    // components/ may only see the wire contract's types, never server code.
    files: ["components/**/*.ts", "components/**/*.tsx"],
    plugins: { conduit },
    rules: {
      "@typescript-eslint/no-restricted-imports": ["error", { patterns: componentPatterns }],
      "conduit/relative-walls": ["error", { root, own: ["components"], patterns: componentPatterns }],
    },
  },
  {
    files: ["**/*.test.ts", "**/*.integration.test.ts", "e2e/**/*.ts", "bench/**/*.ts", "test/**/*.ts", "scripts/**/*.ts"],
    plugins: { conduit },
    rules: {
      "@typescript-eslint/no-restricted-imports": "off",
      "conduit/relative-walls": "off",
      "no-restricted-properties": "off",
      "@typescript-eslint/no-non-null-assertion": "off",
    },
  },
);
