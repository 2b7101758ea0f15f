/**
 * The approval keyboard shared by the inbox and the inline cards of a session: the same keys
 * everywhere (j / k move, a allows, d denies, Shift+D goes to the message box), never while the
 * person types in a text field, the prompt box or a Monaco editor.
 */

/** The keys, as `aria-keyshortcuts` spells them. */
export const approvalShortcut = { allow: "a", deny: "d", message: "Shift+D", next: "j", previous: "k" } as const;

export type ApprovalKeyAction = "allow" | "deny" | "message" | "next" | "previous";

/** True when a key press belongs to something the person is typing in. */
export function isTyping(target: EventTarget | null): boolean {
  if (typeof HTMLElement === "undefined" || !(target instanceof HTMLElement)) return false;
  if (target.isContentEditable) return true;
  if (target.closest(".monaco-editor")) return true;
  const tag = target.tagName;
  if (tag === "TEXTAREA" || tag === "SELECT") return true;
  if (tag === "INPUT") {
    const type = (target as HTMLInputElement).type;
    return !["checkbox", "radio", "button", "submit", "reset"].includes(type);
  }
  return false;
}

/** True when a key press happens in a dialog (a confirmation, the rewind dialog): its keys are its own. */
function inDialog(target: EventTarget | null): boolean {
  return typeof HTMLElement !== "undefined" && target instanceof HTMLElement && target.closest('dialog, [role="dialog"]') !== null;
}

/** The approval action a key press asks for, or undefined when it is not one (or the person is typing). */
export function approvalKeyAction(
  e: Pick<KeyboardEvent, "key" | "defaultPrevented" | "ctrlKey" | "metaKey" | "altKey" | "target">,
): ApprovalKeyAction | undefined {
  if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey || isTyping(e.target) || inDialog(e.target))
    return undefined;
  switch (e.key) {
    case "a":
      return "allow";
    case "d":
      return "deny";
    case "D":
      return "message";
    case "j":
      return "next";
    case "k":
      return "previous";
    default:
      return undefined;
  }
}
