// git's pkt-line framing (gitprotocol-common): four hex digits of length, its own four included,
// then the data; `0000` ends a message (flush), `0001` separates its sections (delim). Shared by
// every transport this process speaks itself (smart HTTP, git upload-pack over a pipe, git://).

export const FLUSH = Buffer.from("0000");
export const DELIM = Buffer.from("0001");
export const FLUSH_MARK = Symbol("flush");
export const DELIM_MARK = Symbol("delim");

export type PktLine = Buffer | typeof FLUSH_MARK | typeof DELIM_MARK;

/** One pkt-line holding `data`. */
export function pkt(data: string): Buffer {
  const b = Buffer.from(data, "utf8");
  return Buffer.concat([Buffer.from((b.length + 4).toString(16).padStart(4, "0"), "latin1"), b]);
}

/** The pkt-lines of `body` from `from` on, in order; null where one is not well formed (and nothing after it). */
export function* pktLines(body: Buffer, from = 0): Generator<PktLine | null> {
  let i = from;
  while (i < body.length) {
    const head = body.toString("latin1", i, i + 4);
    if (!/^[0-9a-f]{4}$/.test(head)) return yield null;
    const n = parseInt(head, 16);
    if (n === 0) yield FLUSH_MARK;
    else if (n === 1) yield DELIM_MARK;
    else if (n < 4 || i + n > body.length) return yield null;
    else yield body.subarray(i + 4, i + n);
    i += n === 0 || n === 1 ? 4 : n;
  }
}

