// A local ESLint rule: the import walls of eslint.config.mjs for relative imports.
//
// `no-restricted-imports` matches the import source as written, so `@/server/web/auth` is caught
// but `../../web/auth` is not. This rule resolves each relative source against the file's folder,
// spells the target as the `@/` path it names (`@/server/web/auth`), and checks that against the
// same groups the layer gives `no-restricted-imports`. Group semantics (the subset the walls use):
// a pattern `@/a/*` matches every path under `@/a/`, `@/a` matches `@/a` and everything under it,
// a leading `!` makes an exception, and the last pattern that matches decides. Groups whose
// entries are not `@/` paths (such as `node:*`) cannot be reached by a relative import and are skipped.
// A layer's own folders (`own`) are never a wall to it: a relative import inside the layer is fine.
import path from "node:path";

/** Whether `target` (an `@/` path) is restricted by the gitignore-style `group`. */
export function restrictedBy(group, target) {
  let restricted = false;
  for (const raw of group) {
    const negated = raw.startsWith("!");
    const pattern = negated ? raw.slice(1) : raw;
    if (!pattern.startsWith("@/")) continue;
    const base = pattern.endsWith("/*") ? pattern.slice(0, -2) : pattern;
    const matches = pattern.endsWith("/*") ? target.startsWith(`${base}/`) : target === base || target.startsWith(`${base}/`);
    if (matches) restricted = !negated;
  }
  return restricted;
}

/** The `@/` path a relative `source` in `filename` names, or undefined outside the project `root`. */
export function aliasOf(root, filename, source) {
  const target = path.relative(root, path.resolve(path.dirname(filename), source));
  if (target === "" || target.startsWith("..") || path.isAbsolute(target)) return undefined;
  return `@/${target.split(path.sep).join("/")}`;
}

/**
 * The rule; its option is `{ root, own, patterns }`: the project root, the layer's own folders
 * (relative to the root), and the layer's `no-restricted-imports` patterns.
 */
export const relativeWalls = {
  meta: {
    type: "problem",
    docs: { description: "the layer walls of eslint.config.mjs, for relative imports" },
    schema: [
      {
        type: "object",
        properties: { root: { type: "string" }, own: { type: "array", items: { type: "string" } }, patterns: { type: "array" } },
        required: ["root", "patterns"],
        additionalProperties: false,
      },
    ],
    messages: { crossed: "'{{source}}' is {{target}}: {{message}}" },
  },
  create(context) {
    const { root, own = [], patterns } = context.options[0];
    const ownAliases = own.map((folder) => `@/${folder}`);
    const check = (node, typeOnly) => {
      const source = node.source?.value;
      if (typeof source !== "string" || !source.startsWith(".")) return;
      const target = aliasOf(root, context.filename, source);
      if (!target || ownAliases.some((folder) => target === folder || target.startsWith(`${folder}/`))) return;
      for (const pattern of patterns) {
        if (pattern.allowTypeImports && typeOnly) continue;
        if (restrictedBy(pattern.group, target)) {
          context.report({ node: node.source, messageId: "crossed", data: { source, target, message: pattern.message } });
          return;
        }
      }
    };
    const typeOnlyImport = (node) =>
      node.importKind === "type" ||
      (node.specifiers.length > 0 && node.specifiers.every((s) => s.type === "ImportSpecifier" && s.importKind === "type"));
    return {
      ImportDeclaration: (node) => check(node, typeOnlyImport(node)),
      ExportNamedDeclaration: (node) => check(node, node.exportKind === "type"),
      ExportAllDeclaration: (node) => check(node, node.exportKind === "type"),
      ImportExpression: (node) => check(node, false),
    };
  },
};
