import type { ReactNode } from "react";

/**
 * The picture of a conversation's last screen that the server renders into the page
 * (`SessionView`'s `initialTail`): on screen as soon as the HTML is, before any script has run,
 * until the live log arrives and the conversation list replaces it. A flex item, it takes the
 * height its column leaves (the session view: what the header and the prompt box leave of the
 * screen), its end at the bottom and the older messages cut off above. Nothing in it can be
 * clicked or focused (`inert`): the live list brings the working controls.
 */
export function ConversationPreview({ children }: { children: ReactNode }) {
  return (
    <div
      data-testid="conversation-preview"
      inert
      aria-busy="true"
      className="pointer-events-none flex min-h-24 flex-1 flex-col justify-end overflow-hidden"
    >
      <ol aria-label="Conversation (loading)">{children}</ol>
    </div>
  );
}
