// FNV-1a, 32 bits, over a string's UTF-16 code units: a quick hash for names of cache files,
// never for anything a clash would make wrong (each caller says what else decides). Here rather
// than node:crypto, which a command loads only where it needs it.
export const FNV_BASIS = 0x811c9dc5;

export function fnv1a32(text: string, basis = FNV_BASIS): number {
  let h = basis;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/** The hash as eight hex digits. */
export const hex32 = (h: number): string => h.toString(16).padStart(8, "0");
