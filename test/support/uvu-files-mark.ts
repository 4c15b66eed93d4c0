/** The start of the lines test/support/uvu-files.ts prints between files and test/run.ts splits its output on. */
export const MARK = "@@uvu-file@@";
