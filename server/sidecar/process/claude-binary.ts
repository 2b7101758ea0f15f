// Finds the `claude` executable: CLAUDE_CLI_PATH when set, else the binary of the pinned
// @anthropic-ai/claude-code package. The package's bin/claude.exe is a 500-byte shell stub until
// its postinstall copies the native binary over it (skipped with --ignore-scripts or when npm
// holds install scripts back), so the platform package's binary is the dependable fallback.
import { execFile } from "node:child_process";
import { accessSync, constants, statSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

/** The CLI cannot be found or does not run. */
export class ClaudeBinaryError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ClaudeBinaryError";
  }
}

export interface ResolveClaudeBinaryOptions {
  /** Explicit path; wins over the environment. */
  cliPath?: string;
  /** Where CLAUDE_CLI_PATH is read; defaults to process.env. */
  env?: Readonly<Record<string, string | undefined>>;
}

// Anything this small is the placeholder stub, never the native binary (hundreds of MB).
const stubMaxBytes = 64 * 1024;
const packageName = "@anthropic-ai/claude-code";

function isExecutableFile(file: string, minBytes = 0): boolean {
  try {
    const stat = statSync(file);
    if (!stat.isFile() || stat.size <= minBytes) return false;
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function platformKey(): string {
  if (process.platform !== "linux") return `${process.platform}-${process.arch}`;
  // The same musl test as the package's own installer: glibc reports its runtime version.
  const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined;
  const musl = report !== undefined && report.header?.glibcVersionRuntime === undefined;
  return `linux-${process.arch}${musl ? "-musl" : ""}`;
}

function packageBinaries(): string[] {
  const require = createRequire(import.meta.url);
  let packageDir: string;
  try {
    packageDir = path.dirname(require.resolve(`${packageName}/package.json`));
  } catch {
    return [];
  }
  const candidates = [path.join(packageDir, "bin", "claude.exe")];
  try {
    // Resolved from the wrapper package, so a nested node_modules copy is found too.
    const platformPackage = `${packageName}-${platformKey()}`;
    const platformDir = path.dirname(
      createRequire(path.join(packageDir, "package.json")).resolve(`${platformPackage}/package.json`),
    );
    candidates.push(path.join(platformDir, process.platform === "win32" ? "claude.exe" : "claude"));
  } catch {
    // No platform package: only the wrapper's binary is left to try.
  }
  return candidates;
}

/** Absolute path of the `claude` executable; throws ClaudeBinaryError with what to do when there is none. */
export function resolveClaudeBinary(options: ResolveClaudeBinaryOptions = {}): string {
  const env = options.env ?? process.env;
  const explicit = options.cliPath ?? (env.CLAUDE_CLI_PATH?.trim() || undefined);
  if (explicit !== undefined) {
    const resolved = path.resolve(explicit);
    if (!isExecutableFile(resolved)) {
      throw new ClaudeBinaryError(`CLAUDE_CLI_PATH points to ${resolved}, which is not an executable file.`);
    }
    return resolved;
  }
  const found = packageBinaries().find((candidate) => isExecutableFile(candidate, stubMaxBytes));
  if (found === undefined) {
    throw new ClaudeBinaryError(
      `The Claude Code CLI was not found: ${packageName} (or its ${packageName}-${platformKey()} binary ` +
        "package) is not installed. " +
        "Run `npm install` with optional dependencies enabled, or set CLAUDE_CLI_PATH to a claude executable.",
    );
  }
  return found;
}

/** The CLI's version (e.g. `2.1.332`) from `claude --version`; throws ClaudeBinaryError when it does not run. */
export function claudeVersion(cliPath: string, timeoutMs = 15_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(cliPath, ["--version"], { timeout: timeoutMs, killSignal: "SIGKILL" }, (error, stdout, stderr) => {
      if (error) {
        const detail = String(stderr).trim() || error.message;
        reject(new ClaudeBinaryError(`\`${cliPath} --version\` failed: ${detail}`, { cause: error }));
        return;
      }
      const match = /\d+\.\d+\.\d+\S*/.exec(String(stdout));
      if (!match) {
        reject(new ClaudeBinaryError(`\`${cliPath} --version\` printed no version: ${String(stdout).trim()}`));
        return;
      }
      resolve(match[0]);
    });
  });
}
