/**
 * How a configured URL is named in messages that clients can read (upstream faults, hold
 * reasons): its scheme, host and port only. Providers put credentials in the query
 * (`?api-key=…`), the path (`/v2/KEY`) or the user part; none of that may reach a client.
 * A path or query is shown as `/…` so the operator still sees that the URL had one.
 */
export function urlLabel(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return '(an invalid URL)';
  }
  const hasMore = (parsed.pathname !== '/' && parsed.pathname !== '') || parsed.search !== '';
  return `${parsed.protocol}//${parsed.host}${hasMore ? '/…' : ''}`;
}
