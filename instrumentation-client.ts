/**
 * Runs in the browser before React hydrates the page (Next's `instrumentation-client` file). A
 * session page opens its socket here, while its scripts still load and hydrate: the socket's
 * handshake through the edge to the sidecar no longer waits for the whole page to hydrate (a long
 * session's page opened it ~380 ms after its scripts had run from the session view's first effect,
 * and still ~350 ms after them from the view's module scope; bench/long-session.ts prints an
 * open's stages). The module is
 * loaded only on those pages; the session view takes the same socket (`getSocket`), and opens it
 * itself after a client-side navigation.
 */
if (/^\/w\/[^/]+\/s\/[^/]+/.test(window.location.pathname)) {
  void import("@/components/session/wire-client")
    .then(({ getSocket }) => getSocket())
    // failing here costs nothing: the session view opens the socket itself as it loads
    .catch(() => undefined);
}
