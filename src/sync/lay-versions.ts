// The replay of a ref whose commits are versions of one record, not operations on it (a memory, a
// document, the loop, an agent's declaration): the local versions are laid on the remote's line.
import { HandoffError } from "../core/errors.ts";
import { eventFromMessage, eventMessage, readRecord, readTyped } from "../store/codec.ts";
import { readCommit } from "../store/history.ts";
import { placeOf, type RefFamily } from "../store/ref-families.ts";
import type { Store } from "../store/store.ts";

/**
 * Lays `commits` (local versions the remote lacks, oldest first) on `remote`. Each keeps its tree,
 * author and event, re-parented on the remote line; its event's time is moved up to the version it
 * now follows, or every other clone would refuse the history on receive (an event before its
 * parent's). A record that is its writer's latest state (an agent's) goes on top only if it is
 * later than the state there: an older one was superseded (a heartbeat replaced by a newer one
 * pushed meanwhile) and is left out.
 */
export async function layVersions(store: Store, ref: string, commits: string[], remote: string): Promise<{ tip: string; rewritten: Map<string, string> }> {
  const rewritten = new Map<string, string>();
  let tip = remote;
  const place = placeOf(ref);
  const latest = place.kind === "known" && place.family.stateAt ? place.family : null;
  let onTop = latest ? await stateAt(store, latest, ref, remote) : null;
  let after = await eventTime(store, remote, ref);
  for (const oid of commits) {
    if (latest) {
      const at = await stateAt(store, latest, ref, oid);
      if (at !== null && onTop !== null && at <= onTop) continue;
      if (at !== null) onTop = at;
    }
    const raw = (await readTyped(store.reader, oid, "commit", ref)).toString("utf8");
    const split = raw.indexOf("\n\n");
    let header = raw.slice(0, split).split("\n").filter((l) => !l.startsWith("parent "));
    let message = raw.slice(split + 2);
    const event = eventFromMessage(message);
    if (event && Date.parse(event.at) < after) {
      const at = new Date(after);
      message = eventMessage({ ...event, at: at.toISOString() });
      const stamp = `${Math.floor(at.getTime() / 1000)} +0000`;
      header = header.map((l) => (/^(author|committer) /.test(l) ? l.replace(/\d+ [+-]\d{4}$/, stamp) : l));
    }
    if (event) after = Math.max(after, Date.parse(event.at));
    header.splice(1, 0, `parent ${tip}`);
    tip = store.writer.write("commit", `${header.join("\n")}\n\n${message}`);
    rewritten.set(oid, tip);
  }
  return { tip, rewritten };
}

/** When the state a commit of a latest-state family holds was declared, in ms; null when its record cannot be read. */
async function stateAt(store: Store, family: RefFamily, ref: string, oid: string): Promise<number | null> {
  try {
    const at = family.stateAt!((await readRecord(store.reader, store.oidBytes, oid, ref, family.file!, family.schema!)).record);
    return Number.isNaN(at) ? null : at;
  } catch (e) {
    if (e instanceof HandoffError) return null;
    throw e;
  }
}

/** The time of the event a commit carries, in ms (0 for a commit without one). */
export async function eventTime(store: Store, oid: string, ref: string): Promise<number> {
  const event = eventFromMessage((await readCommit(store, oid, ref)).message);
  return event ? Date.parse(event.at) : 0;
}
