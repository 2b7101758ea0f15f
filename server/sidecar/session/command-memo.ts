/**
 * Idempotent commands: a retry with the same key gets the first call's outcome (the very same
 * promise). One implementation for the session hub (per session, per person's create) and the
 * approval service (per person's decision).
 *
 * Owns: a bounded, insertion-ordered memory of outcomes by key; the oldest is forgotten first.
 * Must not: know what a command is, read the database, or await anything. A key it has forgotten
 * is the caller's to answer (the hub rebuilds it from the log).
 */

/** Sets `key` in `map` and drops the oldest key once the map holds more than `limit`. */
export function rememberBounded<V>(map: Map<string, V>, key: string, value: V, limit: number): void {
  map.set(key, value);
  if (map.size > limit) {
    const oldest = map.keys().next();
    if (!oldest.done) map.delete(oldest.value);
  }
}

/** Outcomes of commands by key, at most `limit` of them. */
export class CommandMemo<V> {
  private readonly outcomes = new Map<string, V>();

  constructor(private readonly limit: number) {}

  /** The remembered outcome of `key`, if any. */
  get(key: string): V | undefined {
    return this.outcomes.get(key);
  }

  /** Remembers `value` as the outcome of `key`. */
  remember(key: string, value: V): void {
    rememberBounded(this.outcomes, key, value, this.limit);
  }

  /** The remembered outcome of `key`, or else `start()`'s, remembered. */
  once(key: string, start: () => V): V {
    const known = this.outcomes.get(key);
    if (known !== undefined) return known;
    const value = start();
    this.remember(key, value);
    return value;
  }

  get size(): number {
    return this.outcomes.size;
  }
}
