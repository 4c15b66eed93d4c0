// A ref the remote holds under a name no git-handoff writes (`refs/handoff/leases/x`,
// `refs/handoff/agents/<name>/x`, `refs/handoff/docs`) is refused on receive (ref-families.ts
// placeOf), but it also stands in git's way: a ref name cannot be both a ref and a folder of refs,
// so the remote refuses every push of `refs/handoff/leases` while `refs/handoff/leases/x` is there.
// The push's report gives no reason a client can read, and it was retried and then called a lost
// race ("run it again") forever. A write that needs such a ref is refused here instead, naming the
// ref in the way; `sync` leaves out only the refs in the way and pushes the rest (clearOfClashes).
import { fail } from "../core/errors.ts";
import type { PushUpdate } from "../git/push-lease.ts";

/** A ref this clone pushes, and the remote ref whose name it cannot live beside. */
export interface NameClash {
  ref: string;
  blocker: string;
}

/** Each of `pushed` that cannot be created beside one of `remote` (one is a folder of the other). */
export function nameClashes(pushed: Iterable<string>, remote: Iterable<string>): NameClash[] {
  const theirs = [...remote];
  const out: NameClash[] = [];
  for (const ref of pushed) {
    const blocker = theirs.find((r) => r !== ref && (ref.startsWith(r + "/") || r.startsWith(ref + "/")));
    if (blocker) out.push({ ref, blocker });
  }
  return out;
}

/**
 * `sync`'s push without what git would refuse: the refs of `own` in the way of a remote ref refused
 * on receive are held back (`blocked`), and the rest stays one atomic push with every lease. Each
 * ref a clone pushes is its own compare-and-swap, so leaving one out weakens none of the others.
 * `checks`, the leases on tasks the dependencies being pushed reach (dependency-cycles.ts), are
 * what keeps those dependencies from closing a cycle: one of them in the way (a task the remote
 * holds beside a folder of the same name, which git itself never makes) refuses the push whole.
 */
export function clearOfClashes(remote: string, own: PushUpdate[], checks: PushUpdate[], refused: readonly string[]): { own: PushUpdate[]; blocked: NameClash[] } {
  refuseNameClash(remote, checks.map((l) => l.ref), refused);
  const blocked = nameClashes(own.map((l) => l.ref), refused);
  return { own: own.filter((l) => !blocked.some((b) => b.ref === l.ref)), blocked };
}

/**
 * Refuses (code `quarantined`) a push of `pushed` when a remote ref refused on receive (`refused`:
 * names valid in their family never clash with the names this clone writes) would make git refuse
 * it: what is in the way, and the command that removes it.
 */
export function refuseNameClash(remote: string, pushed: Iterable<string>, refused: Iterable<string>): void {
  const clashes = nameClashes(pushed, refused);
  if (!clashes.length) return;
  const { ref, blocker } = clashes[0]!;
  fail(
    "quarantined",
    `the sync remote ${remote} holds ${blocker}, a name no git-handoff writes (refused on receive), and git cannot create ${ref} beside it; remove it with: git handoff sync --repair`,
    { remote, ref: blocker, blocks: clashes.map((c) => c.ref) },
    [{ action: "fix_input", detail: `git handoff sync --repair deletes ${blocker} on ${remote} (it holds nothing any clone reads), then run the command again` }],
  );
}
