import { validationError } from '../domain/errors.js';

const NEWLINE = 0x0a;

/**
 * The lines of a byte stream, without their `\n` or `\r\n`. Split on the byte (a newline
 * byte never occurs inside a UTF-8 sequence), then decoded strictly: a file in another
 * encoding is refused, naming the line, instead of imported with U+FFFD in place of what
 * it said.
 */
export async function* utf8Lines(chunks: AsyncIterable<Buffer>): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  let number = 0;
  const decode = (bytes: Buffer) => {
    number += 1;
    const end =
      bytes.length > 0 && bytes[bytes.length - 1] === 0x0d ? bytes.length - 1 : bytes.length;
    try {
      return decoder.decode(bytes.subarray(0, end));
    } catch {
      throw validationError(`line ${number} is not valid UTF-8`);
    }
  };
  let pending = Buffer.alloc(0);
  for await (const chunk of chunks) {
    const bytes = pending.length > 0 ? Buffer.concat([pending, chunk]) : chunk;
    let start = 0;
    for (let at = bytes.indexOf(NEWLINE); at !== -1; at = bytes.indexOf(NEWLINE, start)) {
      yield decode(bytes.subarray(start, at));
      start = at + 1;
    }
    pending = Buffer.from(bytes.subarray(start));
  }
  if (pending.length > 0) yield decode(pending);
}
