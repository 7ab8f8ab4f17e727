/** A URL may carry a secret in its user info or its query: those are masked, never printed. */
export function redactUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  const hasUser = parsed.username !== '' || parsed.password !== '';
  if (!hasUser && parsed.search === '') return url;
  if (hasUser) {
    parsed.username = '***';
    parsed.password = '';
  }
  for (const name of [...new Set(parsed.searchParams.keys())]) parsed.searchParams.set(name, '***');
  return parsed.toString();
}
