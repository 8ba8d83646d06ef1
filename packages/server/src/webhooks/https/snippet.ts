/** What an attempt's record keeps of an answer (SPEC §4): at most this many bytes. */
export const SNIPPET_BYTES = 1024;

/**
 * C0 controls but tab, newline and carriage return, and DEL. PostgreSQL's `text` refuses NUL outright, so an answer
 * stored as received could never be recorded (its job would be sent again and again); the others are replaced too,
 * so what the admin sees of a binary answer is inert text on every database.
 */
const CONTROL_CHARACTERS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g;

/**
 * At most SNIPPET_BYTES of UTF-8, never ending inside a character (bytes beyond the limit were kept to tell), as
 * text both databases accept: invalid UTF-8 and control characters become U+FFFD.
 */
export function snippetOf(bytes: Buffer): string {
  const fit = (buf: Buffer): Buffer => {
    if (buf.length <= SNIPPET_BYTES) return buf;
    let end = SNIPPET_BYTES;
    // Step back over continuation bytes (10xxxxxx) to the start of the character the limit cuts.
    for (let i = 0; i < 3 && end > 0 && ((buf[end] ?? 0) & 0xc0) === 0x80; i++) end--;
    return buf.subarray(0, end);
  };
  const text = fit(bytes).toString('utf8').replace(CONTROL_CHARACTERS, '\ufffd');
  // Invalid bytes and controls become U+FFFD, three bytes each, so the text can outgrow the limit.
  return Buffer.byteLength(text) <= SNIPPET_BYTES ? text : fit(Buffer.from(text, 'utf8')).toString('utf8');
}
