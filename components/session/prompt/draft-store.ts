/**
 * Prompt drafts per session in localStorage, so a reload (or a crash of the tab) keeps what was
 * typed. Text only: images are too large for the storage quota and are not kept.
 */
const prefix = "conduit:draft:";

export function loadDraft(sessionId: string): string {
  try {
    return window.localStorage.getItem(prefix + sessionId) ?? "";
  } catch {
    return "";
  }
}

export function saveDraft(sessionId: string, text: string): void {
  try {
    if (text) window.localStorage.setItem(prefix + sessionId, text);
    else window.localStorage.removeItem(prefix + sessionId);
  } catch {
    // storage full or disabled: the draft lives as long as the page does
  }
}
