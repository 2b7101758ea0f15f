/**
 * Where the caret is, in terms of the terminal's prompt: a `/command` at the very start of the
 * prompt opens the slash menu, an `@path` word opens file suggestions. Pure, so the rules are
 * tested without a browser.
 */

export interface Trigger {
  kind: "slash" | "mention";
  /** What follows the `/` or `@` up to the caret. */
  query: string;
  /** The index of the `/` or `@`. */
  start: number;
  /** The caret. */
  end: number;
}

/** The trigger the caret is in, if any. */
export function findTrigger(text: string, caret: number): Trigger | undefined {
  const before = text.slice(0, caret);
  // a slash command is the prompt's first word, as in the terminal
  const slash = /^\/([^\s/]*)$/.exec(before);
  if (slash) return { kind: "slash", query: slash[1]!, start: 0, end: caret };
  const mention = /(^|\s)@([^\s@]*)$/.exec(before);
  if (mention) {
    const query = mention[2]!;
    return { kind: "mention", query, start: caret - query.length - 1, end: caret };
  }
  return undefined;
}

/** The text with the trigger replaced by `replacement` and a space, and where the caret goes. */
export function applyCompletion(text: string, trigger: Trigger, replacement: string): { text: string; caret: number } {
  const after = text.slice(trigger.end);
  const spaced = after.startsWith(" ") ? replacement : `${replacement} `;
  const next = text.slice(0, trigger.start) + spaced + after;
  return { text: next, caret: trigger.start + spaced.length + (after.startsWith(" ") ? 1 : 0) };
}

/**
 * Commands matching a query: name prefix first, then names containing it, then descriptions
 * containing it; each group in its original order.
 */
export function filterCommands<T extends { name: string; description?: string | undefined }>(commands: readonly T[], query: string): T[] {
  const q = query.toLowerCase();
  if (!q) return [...commands];
  const prefix: T[] = [];
  const inName: T[] = [];
  const inDescription: T[] = [];
  for (const c of commands) {
    const name = c.name.toLowerCase();
    if (name.startsWith(q)) prefix.push(c);
    else if (name.includes(q)) inName.push(c);
    else if (c.description?.toLowerCase().includes(q)) inDescription.push(c);
  }
  return [...prefix, ...inName, ...inDescription];
}
