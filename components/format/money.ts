/**
 * The one money and number formatter of the UI (Intl.NumberFormat, en-US). Dollars show cents
 * from $1 up, and up to four decimals below a dollar so small model costs ($0.0012) stay
 * visible; counts are grouped (12,345).
 */

const cents = new Intl.NumberFormat("en-US", {
  style: "currency",
  currency: "USD",
  minimumFractionDigits: 2,
  maximumFractionDigits: 2,
});

const subDollar = new Intl.NumberFormat("en-US", {
  style: "currency",
  currency: "USD",
  minimumFractionDigits: 2,
  maximumFractionDigits: 4,
});

const count = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });

const compact = new Intl.NumberFormat("en-US", { notation: "compact", maximumFractionDigits: 1 });

/** $1,234.50 · $12.00 · $0.0646 · $0.50 · $0.00; amounts too small for four decimals read "<$0.0001". */
export function formatUsd(usd: number): string {
  if (!Number.isFinite(usd) || usd === 0) return cents.format(0);
  const magnitude = Math.abs(usd);
  if (magnitude >= 1) return cents.format(usd);
  if (magnitude < 0.00005) return usd < 0 ? "-<$0.0001" : "<$0.0001";
  return subDollar.format(usd);
}

/** 12,345 (rounded to a whole number); "0" for anything not finite. */
export function formatCount(n: number): string {
  return count.format(Number.isFinite(n) ? n : 0);
}

/** 950, 12.3K, 4.1M: token counts in tight spaces. */
export function formatCompactCount(n: number): string {
  return compact.format(Number.isFinite(n) ? n : 0);
}
