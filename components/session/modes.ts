import type { PermissionModeChoice } from "@/server/shared/wire/session";

export interface ModeChoice {
  value: PermissionModeChoice;
  label: string;
  hint: string;
}

const all: readonly ModeChoice[] = [
  { value: "default", label: "Ask before edits", hint: "Ask before edits and commands" },
  { value: "acceptEdits", label: "Accept edits", hint: "File edits run without asking; commands still ask" },
  { value: "plan", label: "Plan", hint: "Plan first; changes need approval" },
  { value: "dontAsk", label: "Don't ask", hint: "Anything not pre-approved is denied, never asked" },
  { value: "bypassPermissions", label: "Bypass", hint: "Everything runs without asking" },
];

/** The modes a person may pick; bypassPermissions only where it is available. */
export function modeChoices(bypassAvailable: boolean): readonly ModeChoice[] {
  return bypassAvailable ? all : all.filter((c) => c.value !== "bypassPermissions");
}

/** The label of a mode, or the raw value for modes the picker does not offer (e.g. auto). */
export function modeLabel(mode: string): string {
  return all.find((c) => c.value === mode)?.label ?? mode;
}
