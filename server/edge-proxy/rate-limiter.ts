/** A token bucket: `capacity` requests at once, refilled at `refillPerMinute`. */
export interface BucketSettings {
  capacity: number;
  refillPerMinute: number;
}

export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export interface RateLimiter {
  /** Spends one token from `key`'s bucket, or says how long until one is available. */
  take(key: string): RateDecision;
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/**
 * In-memory token buckets, one per key, on an injected clock. No timer: buckets refill
 * lazily when touched, and full (idle) buckets are pruned when the map grows past
 * `maxKeys`, so a flood of distinct keys cannot grow memory without bound.
 */
export function createRateLimiter(settings: BucketSettings, now: () => number, maxKeys = 10_000): RateLimiter {
  const perMs = settings.refillPerMinute / 60_000;
  const buckets = new Map<string, Bucket>();

  function refill(bucket: Bucket, at: number): void {
    bucket.tokens = Math.min(settings.capacity, bucket.tokens + (at - bucket.updatedAt) * perMs);
    bucket.updatedAt = at;
  }

  function prune(at: number): void {
    for (const [key, bucket] of buckets) {
      refill(bucket, at);
      if (bucket.tokens >= settings.capacity) buckets.delete(key);
    }
    // Map order is least recently used first (take() re-inserts), so evict from the front.
    for (const key of buckets.keys()) {
      if (buckets.size <= maxKeys * 0.9) break;
      buckets.delete(key);
    }
  }

  return {
    take(key) {
      const at = now();
      let bucket = buckets.get(key);
      if (bucket) {
        buckets.delete(key);
        refill(bucket, at);
      } else {
        if (buckets.size >= maxKeys) prune(at);
        bucket = { tokens: settings.capacity, updatedAt: at };
      }
      buckets.set(key, bucket);
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1;
        return { allowed: true };
      }
      const waitMs = perMs > 0 ? (1 - bucket.tokens) / perMs : Number.POSITIVE_INFINITY;
      const retryAfterSeconds = Number.isFinite(waitMs) ? Math.max(1, Math.ceil(waitMs / 1000)) : 3600;
      return { allowed: false, retryAfterSeconds };
    },
  };
}
