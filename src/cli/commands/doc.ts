import type { Command } from "commander";
import { MAX_DOC_BYTES } from "../../core/shared-doc.ts";
import { readBoundedInput } from "../input-file.ts";
import { docLog, getDoc, listDocs, putDoc } from "../../store/doc-store.ts";
import { parseInteger, withGlobals, withStore } from "../context.ts";
import { emit, warn } from "../../present/output.ts";
import { neutralise } from "../../present/untrusted.ts";

export function registerDoc(program: Command): void {
  const doc = program.command("doc").description("shared documents (a design note, an API contract): versioned, every version in git");

  withGlobals(
    doc
      .command("put")
      .description("store a new version of a document from a file (- for standard input)")
      .argument("<name>", "the document's name, like api-contract")
      .argument("<file>"),
    { writes: true, values: { file: "file" } },
  ).action(async (name: string, file: string, _o, cmd: Command) => {
    await withStore(cmd, async (store, g) => {
      const content = readBoundedInput(file, MAX_DOC_BYTES, "the document", `at most ${MAX_DOC_BYTES} bytes`);
      const v = await putDoc(store, name, content);
      emit(!!g.json, v, () => `stored ${name} version ${v.version} (${v.bytes} bytes)`);
    });
  });

  withGlobals(
    doc
      .command("get")
      .description("print a document (the newest version, or --version N)")
      .argument("<name>")
      .option("--version <n>", "this version (1 is the first)"),
  ).action(async (name: string, o: { version?: string }, cmd: Command) => {
    await withStore(cmd, async (store, g) => {
      const v = await getDoc(store, name, o.version === undefined ? undefined : parseInteger(o.version, "--version", 1, 1_000_000));
      const { content, ...meta } = v;
      if (g.json) return emit(true, { ...meta, content: content.toString("utf8") }, () => "");
      // Someone else's text: on a terminal its control characters are shown, not obeyed.
      process.stdout.write(process.stdout.isTTY ? neutralise(content.toString("utf8")) : content);
    });
  });

  withGlobals(doc.command("list").description("every document, with its size and newest version")).action(async (_o, cmd: Command) => {
    await withStore(cmd, async (store, g) => {
      const { docs, problems } = await listDocs(store);
      for (const p of problems) warn(p);
      emit(!!g.json, docs, () => (docs.length ? docs.map((d) => `${d.name}  v${d.versions}  ${d.bytes} bytes  ${neutralise(d.author)} at ${d.at}`).join("\n") : "no documents"));
    });
  });

  withGlobals(
    doc
      .command("log")
      .description("a document's versions, newest first (--patch: what each changed)")
      .argument("<name>")
      .option("--patch", "show the diff each version made"),
  ).action(async (name: string, o: { patch?: boolean }, cmd: Command) => {
    await withStore(cmd, async (store, g) => {
      const versions = await docLog(store, name, { patch: !!o.patch });
      emit(!!g.json, versions, () =>
        versions.map((v) => `v${v.version}  ${v.commit.slice(0, 12)}  ${neutralise(v.author)}  ${v.at}  ${v.bytes} bytes${v.patch ? `\n${neutralise(v.patch)}` : ""}`).join("\n"),
      );
    });
  });
}
