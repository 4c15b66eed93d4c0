// The dispatcher (dist/git-handoff.cjs) is the one script of a command that has no code cache:
// Node's loader compiles it from its text at every start. V8 compiles a function declaration only
// when it is first called: pre-parsed with the script, then parsed again in full and compiled at
// the call. A cold `task show` called 17 of the dispatcher's functions that way before its bundle
// was loaded (the code cache's path, the reads, the verb), ~0.4 ms in all. A function expression
// in parentheses V8 compiles with the script, in the one parse (its "likely called" heuristic; the
// dispatcher's arrow functions stay lazy: none of them has more than a line).
//
// So each function declared at the dispatcher's top becomes `var f = (function (...) {...});`,
// moved before the script's first statement: defined before anything runs, as a hoisted
// declaration was, so nothing that calls it earlier in the text finds it undefined. Works on
// esbuild's output with whitespace kept (scripts/build.mjs), where a top-level declaration starts a
// line and its body ends at the first line that is `}` alone; the result is compiled once here, so
// a cut in the wrong place fails the build.
import { Script } from "node:vm";

const DECLARATION = /^(async )?function(\*?) (\w+)\(/;

/** `text` (a CommonJS script, whitespace kept) with its top-level function declarations compiled eagerly. */
export function eagerFunctions(text, name) {
  const lines = text.split("\n");
  const head = [];
  const moved = [];
  const rest = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    // The hashbang and the "use strict" directive stay first.
    if (!moved.length && !rest.length && (line.startsWith("#!") || line === '"use strict";' || line === "")) {
      head.push(line);
      continue;
    }
    const m = DECLARATION.exec(line);
    if (!m) {
      rest.push(line);
      continue;
    }
    const end = lines.indexOf("}", i + 1);
    if (end < 0) throw new Error(`${name}: function ${m[3]} has no end`);
    const body = lines.slice(i, end + 1);
    body[0] = `var ${m[3]} = (${m[1] ?? ""}function${m[2]}(${line.slice(m[0].length)}`; // named by the binding, as the declaration was
    body[body.length - 1] = "});";
    moved.push(...body);
    i = end;
  }
  const out = [...head, ...moved, ...rest].join("\n");
  new Script(out, { filename: name }); // a syntax error here is a cut in the wrong place
  return out;
}
