import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const root = fileURLToPath(new URL(".", import.meta.url));
const exclude = ["node_modules/**", ".next/**", "e2e/**", "data/**", "generated/**"];

export default defineConfig({
  resolve: { alias: { "@": root } },
  test: {
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: ["**/*.test.ts", "**/*.test.tsx"],
          exclude: [...exclude, "**/*.integration.test.ts"],
          environment: "node",
        },
      },
      {
        extends: true,
        test: {
          name: "integration",
          include: ["**/*.integration.test.ts"],
          exclude,
          environment: "node",
          testTimeout: 60_000,
          hookTimeout: 60_000,
          // Each integration file spawns real CLI children (about 200 MB each); two cores.
          maxWorkers: 2,
          globalSetup: ["./test/postgres.global.ts", "./test/redis.global.ts", "./test/leak-check.global.ts"],
        },
      },
    ],
  },
});
