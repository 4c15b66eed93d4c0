// Numbers in messages with thousands grouped (250,000). Not `toLocaleString("en")`: that starts
// ICU's number formatting, ~7.5 MB of memory and ~10% of a cold command's CPU here, which a
// message made as the bundle loads paid at every start of every command (measured on `task show`).

/** `n` (an integer) with a comma every three digits. */
export function groupDigits(n: number): string {
  return String(Math.trunc(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}
