/**
 * The `refused` flag of the `--json` envelope: the Go axe patterns, matched case-insensitively
 * at a word start, so scripts that branch on it keep their meaning.
 */
const REFUSAL_PATTERNS = [
  'i cannot',
  "i can't",
  "i'm unable to",
  'i am unable to',
  "i'm not able to",
  'i am not able to',
  'i must decline',
  "i don't have the ability",
  'i do not have the ability',
];

/** Only count after "as an ai" (they are prefixes of the patterns above, kept for parity). */
const AS_AN_AI_INDICATORS = [
  'i cannot',
  "i can't",
  "i'm unable",
  'i am unable',
  "i'm not able",
  'i am not able',
  'i must decline',
];

export function detectRefusal(content: string): boolean {
  if (content === '') return false;
  const lower = content.toLowerCase();
  if (REFUSAL_PATTERNS.some((pattern) => containsAtWordStart(lower, pattern))) return true;
  return lower.includes('as an ai') && AS_AN_AI_INDICATORS.some((i) => containsAtWordStart(lower, i));
}

function containsAtWordStart(text: string, needle: string): boolean {
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + 1)) {
    if (at === 0 || !/[a-z]/i.test(text.charAt(at - 1))) return true;
  }
  return false;
}
