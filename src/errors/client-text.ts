/**
 * Text that came from a client, cut short before it goes into an error message, a log line
 * or memory. A request may carry 64 KiB in one field; copied whole, a flood of them fills
 * the log and the refusals kept for getSubmissionStatuses, and every answer echoes it back.
 */

/** What a quoted value may take in a message. */
export const CLIENT_TEXT_CHARS = 64;

/** `text` cut to `max` characters, with an ellipsis where it was cut. */
export function clip(text: string, max: number = CLIENT_TEXT_CHARS): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** A client's value as JSON (what it sent, with its type visible), cut short. */
export function quote(value: unknown, max: number = CLIENT_TEXT_CHARS): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch {
    json = undefined; // a BigInt or a cycle cannot come from JSON.parse, but say something
  }
  return clip(json ?? String(typeof value), max);
}
