// `check <path...>`: one verb, its command line as data and the function that runs it (verb-spec.ts),
// read by commander's program (lease.ts) and by the hot bundle's fast reading (fast-line.ts) alike.
import { EXIT_CODES } from "../../core/errors.ts";
import { check } from "../../store/lease-actions.ts";
import { withStoreFor } from "../context.ts";
import { verb } from "../verb-command.ts";
import { emit } from "../../present/output.ts";
import { checkText } from "../../present/lease-render.ts";

/** `check <path...>`: per path deny | warn | info | ok, exit 3 if any deny. */
export const CHECK = verb<[string[]]>(
  {
    words: ["check"],
    description: "may the calling agent edit these paths? per path deny | warn | info | ok (exit 3 if any deny)",
    args: [["<path...>", "files or globs"]],
    options: [],
    globals: { values: { path: "file" } },
  },
  ([paths], o) =>
    withStoreFor(o, async (store, g) => {
      const r = await check(store, paths);
      emit(!!g.json, r, () => checkText(r));
      if (r.verdict === "deny") process.exitCode = EXIT_CODES.held_by_other;
    }),
);
