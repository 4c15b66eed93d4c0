// FNV-1a, 32 bits, over a string's UTF-16 code units: a quick hash for names of cache files,
// never for anything a clash would make wrong (each caller says what else decides). Here rather
// than node:crypto, which a command loads only where it needs it.
export const FNV_BASIS = 0x811c9dc5;

const FNV_PRIME = 0x01000193;

export function fnv1a32(text: string, basis = FNV_BASIS): number {
  let h = basis;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), FNV_PRIME) >>> 0;
  return h;
}

/** fnv1a32 of `text` from two offset bases at once: one pass over a long text instead of two. */
export function fnv1a32Pair(text: string, basisA: number, basisB: number): [number, number] {
  let a = basisA >>> 0;
  let b = basisB >>> 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, FNV_PRIME) >>> 0;
    b = Math.imul(b ^ c, FNV_PRIME) >>> 0;
  }
  return [a, b];
}

/** The hash as eight hex digits. */
export const hex32 = (h: number): string => h.toString(16).padStart(8, "0");
