/**
 * The one error that says "another sidecar runs this session": thrown by this sidecar's lease
 * keeper when a claim finds an unexpired lease of another node, caught by the command forwarder,
 * which then sends the command to `ownerId` (once). Never reaches a browser as is.
 *
 * Owns: the error type only.
 */
export class SessionOwnedElsewhere extends Error {
  constructor(
    readonly sessionId: string,
    readonly ownerId: string,
  ) {
    super(`session ${sessionId} is run by sidecar ${ownerId}`);
    this.name = "SessionOwnedElsewhere";
  }
}
