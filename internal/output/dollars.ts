/** `$0.0123` (`$1.23` from a dollar up), as `axe runs` and `--verbose` print a cost. */
export function formatUsd(usd: number): string {
  return `$${usd < 1 ? usd.toFixed(4) : usd.toFixed(2)}`;
}
