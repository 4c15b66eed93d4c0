// The order of `localeCompare` (the user's locale), without making a collator where the answer is
// known: creating the first `Intl.Collator` of a process loads ICU's collation data, 8-25 ms of a
// cold one-shot command, which sorts a handful of lease patterns or times.
//
// Two plain cases need no collator:
// - the first difference is a digit in both strings: the same prefix weighs the same, distinct
//   digits differ at the first level, and no locale joins digits into contractions (times of one
//   ISO format always differ so);
// - in an English locale (root collation, no tailoring), strings of the characters below (paths,
//   ids, patterns): a first level that orders punctuation, then digits, then letters without
//   case, and a third where lower case comes first.

let made: Intl.Collator | null = null;
let rootLike: boolean | null = null;

/** First-level weights of the characters whose root order is plain, from CLDR root. */
const PRIMARY = new Int8Array(128).fill(-1);
" _-:.@/+=".split("").forEach((ch, i) => (PRIMARY[ch.charCodeAt(0)] = i + 1));
for (let d = 0; d < 10; d++) PRIMARY[48 + d] = 10 + d;
for (let l = 0; l < 26; l++) PRIMARY[97 + l] = PRIMARY[65 + l] = 20 + l;

/** `a.localeCompare(b)` in sign; a collator is made only when no plain case answers. */
export function textOrder(a: string, b: string): number {
  if (a === b) return 0;
  let i = 0;
  while (i < a.length && i < b.length && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  const x = a.charCodeAt(i);
  const y = b.charCodeAt(i);
  if (x >= 48 && x <= 57 && y >= 48 && y <= 57) return x - y;
  const plain = (rootLike ??= englishLocale()) ? rootOrder(a, b) : null;
  return plain ?? (made ??= new Intl.Collator()).compare(a, b);
}

/** The default locale is English without a collation of its own (en-US, en-GB, en). */
function englishLocale(): boolean {
  // Resolving the default locale through Intl loads ICU's locale data (about 9 ms of a cold claim).
  return localeFromEnvironment(process.env) ?? icuSaysEnglish();
}

/** What ICU resolves the default locale to, asked of ICU (PluralRules loads no collation data). */
export function icuSaysEnglish(): boolean {
  return /^en(-[A-Z]{2})?$/.test(new Intl.PluralRules().resolvedOptions().locale);
}

/**
 * True where the environment alone shows ICU's default locale is English as icuSaysEnglish tells
 * it; null where only ICU can say. ICU takes the first of LC_ALL, LC_MESSAGES and LANG that is set
 * (set but empty gives "und"), drops the charset, and reads C or POSIX (or nothing) as en-US.
 * test/text-order.test.ts compares this with ICU's answer in child processes.
 */
export function localeFromEnvironment(env: NodeJS.ProcessEnv): true | null {
  const v = env.LC_ALL ?? env.LC_MESSAGES ?? env.LANG;
  if (v === undefined) return true;
  if (v.includes("@")) return null;
  const base = v.split(".", 1)[0]!;
  return base === "C" || base === "POSIX" || /^en(_[A-Z]{2})?$/.test(base) ? true : null;
}

/** Root collation of two strings of PRIMARY's characters; null when another character appears. */
function rootOrder(a: string, b: string): number | null {
  for (const s of [a, b]) for (let i = 0; i < s.length; i++) if ((PRIMARY[s.charCodeAt(i)] ?? -1) < 0) return null;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const d = PRIMARY[a.charCodeAt(i)]! - PRIMARY[b.charCodeAt(i)]!;
    if (d) return d;
  }
  if (a.length !== b.length) return a.length - b.length;
  // Same letters and marks: the first difference of case decides, lower case first.
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return x > y ? -1 : 1;
  }
  return 0;
}
