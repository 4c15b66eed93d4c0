// How records become git objects: a commit whose tree holds the record as JSON plus a format
// marker, and whose message is the event (a summary line, a blank line, the event as JSON).
import * as z from "zod/mini";
import { fail } from "../core/errors.ts";
import { HandoffEvent, summarize } from "../core/event.ts";
import { describeIssues } from "../core/schema-helpers.ts";
import type { GitObject, ObjectReader } from "../git/object-reader.ts";
import type { ObjectWriter } from "../git/object-writer.ts";
import { commitHeader, encodeTree, treeIds } from "../git/tree-object.ts";
import type { Task } from "../core/task.ts";
import { needsTaskFormatV2, TASK_MARKER_V2, taskMarkerV2Oid } from "./task-format.ts";

export const FORMAT_MARKER = "git-handoff 1\n";

/** The file of a task record, the one record kind written in two formats (task-format.ts). */
const TASK_RECORD = "task.json";

/**
 * The blob id of FORMAT_MARKER: a record of this format is recognised without reading its marker.
 * Written out, not hashed at start: a read-only command (a hook's `check`) would otherwise load
 * node:crypto for this alone. test/small-object-codec.test.ts hashes FORMAT_MARKER and compares.
 */
export function formatMarkerOid(oidBytes: number): string {
  return oidBytes === 32 ? MARKER_SHA256 : MARKER_SHA1;
}

export const MARKER_SHA1 = "5354ac94075d9104ca9d62ced91d49f78d85e478";
export const MARKER_SHA256 = "b38d66c31a6a6ebef1d366041cb417aeabf8c4d375224b9a94360df6f48ad450";

const warnedFormats = new Set<string>();

/**
 * A record whose `format` marker is not ours was written by another version of git-handoff: it is
 * read (its schema still decides), and the reader says so once per ref and process. A task
 * record may also be in task format 2 (task-format.ts), which this build writes.
 */
export function noteUnknownFormat(ref: string, formatOid: string | undefined, oidBytes: number, file?: string): boolean {
  if (formatOid === undefined || formatOid === formatMarkerOid(oidBytes)) return false;
  if (file === TASK_RECORD && formatOid === taskMarkerV2Oid(oidBytes)) return false;
  if (!warnedFormats.has(ref)) {
    warnedFormats.add(ref);
    process.stderr.write(`git-handoff: ${ref} was written in an unknown format version (not ${FORMAT_MARKER.trim()}): update git-handoff; see git handoff doctor\n`);
  }
  return true;
}

export interface ParsedCommit {
  tree: string;
  parents: string[];
  time: number;
  message: string;
}

export function parseCommit(data: Buffer): ParsedCommit {
  const text = data.toString("utf8");
  const split = text.indexOf("\n\n");
  const { tree, parents, time } = commitHeader(split < 0 ? text : text.slice(0, split));
  return { tree: tree ?? "", parents, time, message: split < 0 ? "" : text.slice(split + 2) };
}

/** Tree entries by name (a record's tree: flat files, plus a bundle's folders); fails on a tree that is not well formed. */
export function parseTree(data: Buffer, oidBytes: number, ref: string): Map<string, string> {
  return treeIds(data, oidBytes) ?? fail("corrupt_state", `${ref} is corrupt: a tree object is not well formed`, { ref });
}

/** A record's tree of plain files, from file name to blob id. */
export function encodeFiles(files: Map<string, string>): Buffer {
  return encodeTree([...files].map(([name, oid]) => ({ mode: "100644", name, oid })));
}

export function eventMessage(event: HandoffEvent): string {
  return `${summarize(event)}\n\n${JSON.stringify(event, null, 2)}\n`;
}

/** The event carried by a commit message, or null for a commit we did not write. */
export function eventFromMessage(message: string): HandoffEvent | null {
  const raw = eventJson(message);
  if (raw === undefined) return null;
  const parsed = HandoffEvent.safeParse(raw);
  return parsed.success ? parsed.data : null;
}

/**
 * The event carried by a commit message when it is of one of `types`, else null. The type is read
 * from the JSON before anything is validated: a reader after a few types (log-index.ts) validates
 * none of the others, the hook catches that are most of a log, and so never sets zod up for them
 * (a pre-edit hook that found an agent's log moved spent ~10 ms of CPU on it before its answer).
 */
export function eventOfTypes(message: string, types: ReadonlySet<string>): HandoffEvent | null {
  const raw = eventJson(message);
  const type = (raw as { type?: unknown } | null | undefined)?.type;
  if (typeof type !== "string" || !types.has(type)) return null;
  const parsed = HandoffEvent.safeParse(raw);
  return parsed.success ? parsed.data : null;
}

/** The JSON after a commit message's summary, unvalidated; undefined when there is none. */
function eventJson(message: string): unknown {
  const start = message.indexOf("\n\n{");
  if (start < 0) return undefined;
  try {
    return JSON.parse(message.slice(start + 2));
  } catch {
    return undefined;
  }
}

export function commitObject(opts: { tree: string; parent: string | null; author: string; at: Date; message: string }): string {
  const secs = Math.floor(opts.at.getTime() / 1000);
  const who = `${opts.author} <git-handoff@localhost> ${secs} +0000`;
  return `tree ${opts.tree}\n${opts.parent ? `parent ${opts.parent}\n` : ""}author ${who}\ncommitter ${who}\n\n${opts.message}`;
}

/** An object's byte bound and how to say it is past it. */
export interface ByteBound {
  bytes: number;
  tooBig: (size: number) => string;
}

/**
 * Reads an object that must exist with a given type, or fails naming the ref it came from. With
 * `bound` (what came from another clone), its size is measured from its header before it is read
 * and again as read: past the bound it fails as `tooBig` says, unread where the header told.
 */
export async function readTyped(reader: ObjectReader, oid: string, type: GitObject["type"], ref: string, bound?: ByteBound): Promise<Buffer> {
  if (bound) {
    const info = await reader.info(oid);
    if (info && info.size > bound.bytes) fail("corrupt_state", bound.tooBig(info.size), { ref });
  }
  const obj = await reader.read(oid);
  if (!obj) fail("corrupt_state", `${ref} is corrupt: object ${oid} is missing or unreadable (repair: git handoff doctor --repair)`, { ref, object: oid });
  if (obj.type !== type) fail("corrupt_state", `${ref} is corrupt: ${oid} is a ${obj.type}, expected a ${type} written by git-handoff`, { ref });
  if (bound && obj.data.length > bound.bytes) fail("corrupt_state", bound.tooBig(obj.data.length), { ref });
  return obj.data;
}

/** Decodes the record stored at a commit: `<file>` in its tree, checked against `schema`. */
export async function readRecord<T>(
  reader: ObjectReader,
  oidBytes: number,
  commitOid: string,
  ref: string,
  file: string,
  schema: z.ZodMiniType<T>,
): Promise<{ record: T; commit: ParsedCommit; foreign: boolean }> {
  const commit = parseCommit(await readTyped(reader, commitOid, "commit", ref));
  const tree = parseTree(await readTyped(reader, commit.tree, "tree", ref), oidBytes, ref);
  const blobOid = tree.get(file);
  if (!blobOid) fail("corrupt_state", `${ref} is corrupt: its tree has no ${file}`, { ref });
  const foreign = noteUnknownFormat(ref, tree.get("format"), oidBytes, file);
  const text = (await readTyped(reader, blobOid, "blob", ref)).toString("utf8");
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    fail("corrupt_state", `${ref} is corrupt: ${file} is not valid JSON`, { ref });
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) fail("corrupt_state", `${ref} is corrupt: ${file}: ${describeIssues(parsed.error)}`, { ref });
  return { record: parsed.data, commit, foreign };
}

/** Where records are written: the object writer, and who learns of each record written. */
export interface RecordTarget {
  writer: ObjectWriter;
  /**
   * The record now stored at commit `oid`, whose commit, tree and blob are `objects`: a later read
   * needs no object read back (store.ts).
   */
  wroteRecord?(file: string, oid: string, record: unknown, objects: string[]): void;
}

/** Writes one commit per step on top of `parent` and returns the new tip. */
export function writeSteps<T>(
  target: RecordTarget,
  parent: string | null,
  file: string,
  steps: { event: HandoffEvent; record: T }[],
  serialize: (record: T) => string = (r) => JSON.stringify(r, null, 2) + "\n",
): string {
  const writer = target.writer;
  const formatBlob = writer.write("blob", FORMAT_MARKER);
  let v2Blob: string | undefined;
  let tip = parent;
  let objects: string[] = [];
  for (const step of steps) {
    const blob = writer.write("blob", serialize(step.record));
    // Each commit in the format its own record needs: a task changes format at a reclaim and back at the next grant.
    const v2 = file === TASK_RECORD && needsTaskFormatV2(step.record as Task);
    const marker = v2 ? (v2Blob ??= writer.write("blob", TASK_MARKER_V2)) : formatBlob;
    const tree = writer.write("tree", encodeFiles(new Map([["format", marker], [file, blob]])));
    const message = eventMessage(step.event);
    tip = writer.write("commit", commitObject({ tree, parent: tip, author: step.event.by ?? step.event.agent, at: new Date(step.event.at), message }));
    objects = [tip, tree, blob];
  }
  if (steps.length) target.wroteRecord?.(file, tip!, steps.at(-1)!.record, objects);
  return tip!;
}
