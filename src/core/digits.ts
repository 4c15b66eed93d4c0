// Numbers in messages with thousands grouped (250,000). Not `toLocaleString("en")`: that starts
// ICU's number formatting, ~7.5 MB of memory and ~10% of a cold command's CPU here, which a
// message made as the bundle loads paid at every start of every command (measured on `task show`).

// Nor a regular expression: some messages are made as the bundle loads (match-budget.ts), and
// V8 compiles a pattern with look-aheads at its first use (~0.1-0.2 ms of every cold command).

/** `n` (an integer) with a comma every three digits. */
export function groupDigits(n: number): string {
  const s = String(Math.trunc(n));
  const from = s.startsWith("-") ? 1 : 0;
  // Only a plain run of digits is grouped: 1e+21 stays as String gives it.
  for (let i = from; i < s.length; i++) if (s.charCodeAt(i) < 48 || s.charCodeAt(i) > 57) return s;
  let out = s.slice(0, from);
  for (let i = from; i < s.length; i++) {
    if (i > from && (s.length - i) % 3 === 0) out += ",";
    out += s[i];
  }
  return out;
}
