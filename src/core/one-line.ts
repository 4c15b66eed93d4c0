// A text's first line cut to fit a listing. Cut between UTF-16 units, an emoji (two units) at the
// edge became half a character, shown as U+FFFD; the cut steps back over a lone high surrogate.

/** The first line of `s`, at most `max` UTF-16 units, `…` marking a cut. */
export function oneLine(s: string, max: number): string {
  const line = s.split("\n", 1)[0] ?? "";
  if (line.length <= max) return line;
  let end = max - 1;
  const last = line.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return line.slice(0, end) + "…";
}
