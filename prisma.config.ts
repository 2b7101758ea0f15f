// Prisma 7 reads the datasource URL from here, not from schema.prisma, and does not load .env
// itself. Only the Prisma CLI reads this file (generate, studio, db seed); migrations go through
// scripts/db-migrate.ts, which applies the same defaults via server/db/database-url.ts.
import { defineConfig } from "prisma/config";
import { DEFAULT_DATABASE_URL, parseDatabaseUrl } from "./server/db/database-url";

try {
  process.loadEnvFile(".env");
} catch {
  // no .env: the environment alone decides
}

// Not env("DATABASE_URL"): that throws when the variable is unset, and `prisma generate` in
// postinstall must work on a fresh checkout without one.
const url = process.env.DATABASE_URL || DEFAULT_DATABASE_URL;
const usesPostgres = parseDatabaseUrl(url).provider === "postgresql";

export default defineConfig({
  schema: usesPostgres ? "prisma/postgres/schema.prisma" : "prisma/schema.prisma",
  migrations: {
    path: usesPostgres ? "prisma/postgres/migrations" : "prisma/migrations",
    seed: "tsx prisma/seed.ts",
  },
  datasource: { url: parseDatabaseUrl(url).url },
});
