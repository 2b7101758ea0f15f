/**
 * Collects items that arrive one task at a time (socket facts) and hands them over together in
 * the next task: while the page is busy rendering, the facts queued behind that work become one
 * React render instead of one each, so a fact that matters (an approval for this person) is not
 * held up behind a queue of renders. When the page is idle the delay is one task (~1 ms).
 */
export interface Coalescer<T> {
  push(item: T): void;
  /** Drops what was not delivered yet; nothing is delivered after it. */
  cancel(): void;
}

export function coalesce<T>(deliver: (items: T[]) => void): Coalescer<T> {
  let queued: T[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  const flush = () => {
    timer = undefined;
    const items = queued;
    queued = [];
    if (items.length > 0) deliver(items);
  };
  return {
    push(item) {
      queued.push(item);
      timer ??= setTimeout(flush, 0);
    },
    cancel() {
      clearTimeout(timer);
      timer = undefined;
      queued = [];
    },
  };
}
