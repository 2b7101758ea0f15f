"use client";

import { useSyncExternalStore } from "react";

const noSubscription = () => () => {};

/**
 * False in the server's HTML and while React hydrates it, true once the page's handlers are attached.
 * Buttons whose work lives in an event handler stay disabled until then: a click that lands before
 * hydration would do nothing (Sign out) or submit the form natively, putting its fields, a password
 * among them, into the page's URL.
 */
export function useHydrated(): boolean {
  return useSyncExternalStore(
    noSubscription,
    () => true,
    () => false,
  );
}
