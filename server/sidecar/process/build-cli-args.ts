/**
 * The argv of a `claude` child (protocol reference §1). An array handed to `spawn` without a
 * shell, and every value checked first: a model name starting with `-` would otherwise become a
 * flag of its own.
 */
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import { ZPermissionMode } from "@/server/shared/claude-protocol/encode";
import type { PermissionMode } from "@/server/shared/claude-protocol/messages";

/** The flags every Conduit child gets: NDJSON both ways, permission questions over stdio. */
export const streamJsonFlags = [
  "--output-format",
  "stream-json",
  "--input-format",
  "stream-json",
  "--verbose",
  "--permission-prompt-tool",
  "stdio",
] as const;

/** What varies between children. */
export interface CliArgsInput {
  /** The conversation: `--resume <id>` when `resume`, else `--session-id <id>` (a new conversation with this id). */
  claudeSessionId: string;
  resume: boolean;
  permissionMode: PermissionMode;
  model?: string | undefined;
  /** `--include-partial-messages`; default true. */
  includePartialMessages?: boolean | undefined;
  /** `--allow-dangerously-skip-permissions`: lets the session switch to bypassPermissions later. */
  allowBypass?: boolean | undefined;
  maxBudgetUsd?: number | undefined;
  /**
   * Whether the workspace's own `.claude/settings.json` / `settings.local.json` may take effect
   * (an owner reviewed and trusted them). Default `untrusted`: see {@link settingSourceFlags}.
   */
  workspaceSettings?: "untrusted" | "trusted" | undefined;
}

/**
 * The settings of a CLI that must not take the workspace's own configuration: no setting source
 * at all, hooks off, and the workspace's `CLAUDE.md` brought back through `--add-dir .` with
 * `CLAUDE_CODE_ADDITIONAL_DIRECTORIES_CLAUDE_MD` (set here, in flag settings, which always apply).
 */
export const untrustedFlagSettings = {
  disableAllHooks: true,
  env: { CLAUDE_CODE_ADDITIONAL_DIRECTORIES_CLAUDE_MD: "1" },
} as const;

/**
 * What the CLI 2.1.332 loads, as measured against the real binary
 * (`workspace-settings.integration.test.ts` records it):
 * - default (all sources): `.claude/settings.local.json` allow rules skip the approval and its
 *   hooks run; `.claude/settings.json` allow rules are ignored in a workspace the CLI has not
 *   trusted, but its hooks run anyway.
 * - `--setting-sources project` still applies an untrusted `.claude/settings.json`'s `env`
 *   (`ANTHROPIC_BASE_URL`, `HTTPS_PROXY`: the model traffic and its key go elsewhere) and runs its
 *   `apiKeyHelper` / `awsAuthRefresh` / `awsCredentialExport`; it loads `.claude/skills`
 *   (`allowed-tools` run without an approval once the skill is invoked), `.claude/commands`
 *   (`allowed-tools` run without any approval) and `.claude/agents` (`permissionMode: acceptEdits`
 *   lets the subagent write without an approval). `--safe-mode` keeps the `env` and the helpers.
 * - `--setting-sources ""` reads none of them (nor the user settings, skills, commands and agents
 *   in the session-writable CLI config directory); CLAUDE.md needs the `--add-dir .` above.
 * Trusted (an owner reviewed the settings files and the skills, commands and agents, see
 * `workspace-settings.ts` in the domain): project and local settings with all of that, hooks
 * included; the user settings stay out.
 */
export function settingSourceFlags(workspaceSettings: "untrusted" | "trusted" = "untrusted"): string[] {
  return workspaceSettings === "trusted"
    ? ["--setting-sources", "project,local"]
    : ["--setting-sources", "", "--add-dir", ".", "--settings", JSON.stringify(untrustedFlagSettings)];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// Model ids and aliases: `claude-opus-5-5`, `sonnet`, `us.anthropic.claude…:0`, `claude-x[1m]`.
const MODEL = /^[A-Za-z0-9][A-Za-z0-9._:/@[\]-]{0,199}$/;

/** True for a value `--model` may take: an id or alias, never something that reads as a flag. */
export function isModelName(value: string): boolean {
  return MODEL.test(value);
}

/** Builds the argv (without the executable). Throws AppError `invalid_payload` / `forbidden` on bad input. */
export function buildCliArgs(input: CliArgsInput): string[] {
  if (!UUID.test(input.claudeSessionId)) {
    throw new AppError(ErrorCode.invalidPayload, `Not a claude session id (a UUID): ${input.claudeSessionId}`);
  }
  const mode = ZPermissionMode.safeParse(input.permissionMode);
  if (!mode.success) {
    throw new AppError(ErrorCode.invalidPayload, `Unknown permission mode: ${String(input.permissionMode)}`);
  }
  if (mode.data === "bypassPermissions" && input.allowBypass !== true) {
    throw new AppError(ErrorCode.forbidden, "bypassPermissions needs the workspace to allow bypass");
  }
  const args: string[] = [
    ...streamJsonFlags,
    input.resume ? "--resume" : "--session-id",
    input.claudeSessionId,
    "--permission-mode",
    mode.data,
  ];
  if (input.model !== undefined) {
    if (!isModelName(input.model)) throw new AppError(ErrorCode.invalidPayload, `Not a model name: ${input.model}`);
    args.push("--model", input.model);
  }
  if (input.includePartialMessages !== false) args.push("--include-partial-messages");
  if (input.allowBypass === true) args.push("--allow-dangerously-skip-permissions");
  if (input.maxBudgetUsd !== undefined) {
    if (!Number.isFinite(input.maxBudgetUsd) || input.maxBudgetUsd <= 0) {
      throw new AppError(ErrorCode.invalidPayload, `maxBudgetUsd must be a positive number, got ${input.maxBudgetUsd}`);
    }
    args.push("--max-budget-usd", String(input.maxBudgetUsd));
  }
  args.push(...settingSourceFlags(input.workspaceSettings));
  return args;
}
