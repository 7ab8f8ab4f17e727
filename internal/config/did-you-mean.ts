/** The closest candidate to a misspelt name, or undefined when none is close enough. */
function didYouMean(input: string, candidates: readonly string[]): string | undefined {
  const squash = (text: string): string => text.toLowerCase().replace(/[-_\s]/g, '');
  const wanted = squash(input);
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    if (squash(candidate) === wanted) return candidate;
    const distance = editDistance(wanted, squash(candidate));
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  const limit = Math.max(1, Math.floor(wanted.length / 3));
  return bestDistance <= limit ? best : undefined;
}

export function suggestion(input: string, candidates: readonly string[]): string {
  const match = didYouMean(input, candidates);
  return match ? ` (did you mean "${match}"?)` : '';
}

function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 8) return Math.abs(a.length - b.length);
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
    }
    previous = current;
  }
  return previous[b.length]!;
}
