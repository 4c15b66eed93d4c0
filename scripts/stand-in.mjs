// The text of a stand-in module (scripts/lazy-zod.mjs, lazy-minimatch.mjs, lazy-ours.mjs): each
// name it offers passes its call on to the real module, which `get` (an expression of the lines
// before) returns, set up at that first call. Each stand-in is declared apart and exported under
// the real name: some names are reserved words (zod's `catch`).
/**
 * `head`: the lines that declare `get`; `fns`: names of functions (a generator's stand-in returns
 * the real one's generator); `classes`: a class whose constructor makes the real one and whose
 * `instanceof` asks the real one; `objects`: a proxy passing each property read on.
 */
export function standInText(head, { fns = [], classes = [], objects = [] }) {
  const lines = [...head];
  for (const k of fns) lines.push(`function standIn_${k}(...a) { return get().${k}(...a); }`);
  for (const k of classes) lines.push(`class standIn_${k} { constructor(...a) { return new (get().${k})(...a); } static [Symbol.hasInstance](x) { return x instanceof get().${k}; } }`);
  for (const k of objects) lines.push(`const standIn_${k} = /* @__PURE__ */ new Proxy({}, { get: (_, p) => get().${k}[p] });`);
  for (const k of [...fns, ...classes, ...objects]) lines.push(`export { standIn_${k} as ${k} };`);
  return lines.join("\n");
}
