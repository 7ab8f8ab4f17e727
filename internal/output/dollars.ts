/** `$0.0123` (`$1.23` from a dollar up), as `axe runs` and `--verbose` print a cost. */
export function formatUsd(usd: number): string {
  return `$${usd < 1 ? usd.toFixed(4) : usd.toFixed(2)}`;
}

/** `$0.0123` or, when caching saved something, `$0.0123 ($0.0456 without caching)`. */
export function costText(usd: number, withoutCache: number): string {
  return withoutCache > usd
    ? `${formatUsd(usd)} (${formatUsd(withoutCache)} without caching)`
    : formatUsd(usd);
}
