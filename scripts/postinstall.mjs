// Generates the Prisma clients after every install. The Prisma CLI wants a native schema
// engine it cannot download here; `generate` only checks that the file exists.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";

if (!existsSync("prisma/schema.prisma")) process.exit(0);
const env = { ...process.env, PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY ?? process.execPath };
for (const schema of ["prisma/schema.prisma", "prisma/postgres/schema.prisma"]) {
  if (!existsSync(schema)) continue;
  execFileSync(process.execPath, ["node_modules/prisma/build/index.js", "generate", "--schema", schema], { stdio: "inherit", env });
}
