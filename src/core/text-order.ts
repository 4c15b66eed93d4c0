// The order of `localeCompare` (the user's locale), without making a collator where the answer is
// plain: creating the first `Intl.Collator` of a process loads ICU's collation data, 8-25 ms of a
// cold one-shot command. Two strings whose first difference is a digit in both sort by that digit
// in every locale (the same prefix weighs the same, distinct digits differ at the first level and
// no locale joins digits into contractions), which is how times of one ISO format always differ.

let made: Intl.Collator | null = null;

/** `a.localeCompare(b)` in sign; a collator is made only when the first difference is not digit against digit. */
export function textOrder(a: string, b: string): number {
  if (a === b) return 0;
  let i = 0;
  while (i < a.length && i < b.length && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  const x = a.charCodeAt(i);
  const y = b.charCodeAt(i);
  if (x >= 48 && x <= 57 && y >= 48 && y <= 57) return x - y;
  return (made ??= new Intl.Collator()).compare(a, b);
}
