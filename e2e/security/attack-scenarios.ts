/**
 * Scripted-model scenarios the security suite uses to make a real session run what an attacker
 * would ask for: the command or path travels in the prompt, the model calls the tool with it,
 * and a member approves (or the attack shows it needed no approval).
 *
 *   "[scenario:security-bash] RUN: cat ../../.auth-secret"
 *   "[scenario:security-read] PATH: /etc/passwd"
 *   "[scenario:security-edit] PATH: /workspace/d/f.txt"
 */
import { callTool, say, type Scenario, type StepContext } from "../../server/model-server/scenario";

/** The text after `marker` in the prompt, up to the end. */
function argumentOf(ctx: StepContext, marker: string): string {
  const at = ctx.prompt.indexOf(marker);
  return at < 0 ? "" : ctx.prompt.slice(at + marker.length).trim();
}

export const attackScenarios: Scenario[] = [
  {
    name: "security-bash",
    steps: [
      (ctx) => callTool("Bash", { command: argumentOf(ctx, "RUN:"), description: "Security suite check" }, { text: "Running it." }),
      (ctx) => say(`Finished (${ctx.lastToolResults[0]?.isError ? "error" : "ok"}).`),
    ],
  },
  {
    name: "security-read",
    steps: [
      (ctx) => callTool("Read", { file_path: argumentOf(ctx, "PATH:") }, { text: "Reading it." }),
      (ctx) => say(`Finished (${ctx.lastToolResults[0]?.isError ? "error" : "ok"}).`),
    ],
  },
  {
    // an Edit an approver sees as a card: the card's original side is the file as read from disk
    name: "security-edit",
    steps: [
      (ctx) => callTool("Edit", { file_path: argumentOf(ctx, "PATH:"), old_string: "inside", new_string: "edited" }, { text: "Editing it." }),
      (ctx) => say(`Finished (${ctx.lastToolResults[0]?.isError ? "error" : "ok"}).`),
    ],
  },
];

/** The prompt that makes the model run `command` with Bash. */
export const bashPrompt = (command: string) => `[scenario:security-bash] RUN: ${command}`;

/** The prompt that makes the model Read `file`. */
export const readPrompt = (file: string) => `[scenario:security-read] PATH: ${file}`;

/** The prompt that makes the model Edit `file` (an approval card reads it). */
export const editPrompt = (file: string) => `[scenario:security-edit] PATH: ${file}`;
