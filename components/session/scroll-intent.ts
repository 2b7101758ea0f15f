/**
 * Which input events say the reader may be scrolling the conversation themselves (so a scroll up
 * soon after lets go of the bottom): the wheel, touch, the pointer (the scrollbar), and only the
 * keys that scroll the page, pressed outside a text field. Typing a prompt and pressing Enter is
 * not scrolling: counting it made the conversation stop following its own stream whenever a row
 * was re-measured (the page moving up by itself) in the second after a prompt was sent.
 */
const scrollingKeys = new Set(["ArrowUp", "ArrowDown", "PageUp", "PageDown", "Home", "End", " ", "Spacebar"]);

/** The part of an event this reads, so it can be checked without a DOM. */
export interface InputLike {
  type: string;
  key?: string;
  target: unknown;
}

export function isScrollIntent(event: InputLike): boolean {
  if (event.type !== "keydown") return true;
  return event.key !== undefined && scrollingKeys.has(event.key) && !isTextField(event.target);
}

function isTextField(target: unknown): boolean {
  if (target === null || typeof target !== "object") return false;
  const el = target as { isContentEditable?: boolean; tagName?: string };
  if (el.isContentEditable === true) return true;
  const tag = el.tagName?.toUpperCase();
  return tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT";
}
