/** @type {import('next').NextConfig} */
const nextConfig = {
  reactStrictMode: true,
  poweredByHeader: false,
  // Native and server-only packages stay outside the bundle.
  serverExternalPackages: ["argon2", "better-sqlite3", "pino", "prom-client", "@prisma/adapter-better-sqlite3", "@prisma/adapter-pg", "pg", "esbuild"],
  typescript: { tsconfigPath: "tsconfig.json" },
  // CONDUIT_BROWSER_SOURCE_MAPS=1 at build time (profiling, docs/PERFORMANCE.md): maps beside the page's chunks
  productionBrowserSourceMaps: process.env.CONDUIT_BROWSER_SOURCE_MAPS === "1",
};

export default nextConfig;
