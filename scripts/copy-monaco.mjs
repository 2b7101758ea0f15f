// Monaco is served from this origin (no CDN): copy the package's AMD build into public/.
import { cpSync, existsSync } from "node:fs";

const from = "node_modules/monaco-editor/min/vs";
const to = "public/monaco/vs";
if (!existsSync(from)) {
  console.error(`monaco-editor is not installed (${from} missing): run npm install`);
  process.exit(1);
}
cpSync(from, to, { recursive: true });
