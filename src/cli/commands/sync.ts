import type { Command } from "commander";
import { EXIT_CODES, fail } from "../../core/errors.ts";
import { ackConflicts, readConflicts } from "../../sync/local-area.ts";
import { COORDINATION_REMOTE, setCoordinationRemote, setRemote, showRemote, undoCoordinationRemote, type RemoteSetting } from "../../sync/remote-config.ts";
import { setRefPrefixChecked } from "../../sync/ref-prefix.ts";
import { heldBackRefusal } from "../../sync/held-back.ts";
import { requireRemote, sync } from "../../sync/sync.ts";
import { repairQuarantined, type Repair } from "../../sync/repair.ts";
import type { Quarantined } from "../../sync/quarantine.ts";
import { validateTaskId } from "../../core/ids.ts";
import { compact } from "../../store/archive.ts";
import { doctor } from "../../sync/doctor.ts";
import { checkFences, requireFences } from "../../sync/fence.ts";
import { parseInteger, withGlobals, withStore } from "../context.ts";
import { emit, isTerminal } from "../../present/output.ts";
import { quarantineLines } from "../../present/render-quarantine.ts";
import { syncText } from "../../present/render-sync.ts";

export function registerSync(program: Command): void {
  withGlobals(
    program
      .command("remote")
      .description("show or set the git remote that carries refs/handoff/* (default: origin when it exists)")
      .argument("[name]", "an existing git remote")
      .option("--none", "turn sync off for this repository")
      .option("--default", "forget the setting (back to origin when it exists)")
      .option("--ref-prefix <prefix>", "for hosts that accept only branches: keep refs/handoff/* under refs/heads/<prefix>/ on that remote (refs/handoff/ to undo)")
      .option("--url <url>", `a dedicated coordination repository: add it as git remote [name] (default ${COORDINATION_REMOTE}, no fetch refspec) and sync through it`),
    { agent: false },
  ).action(async (given: string | undefined, o: { none?: boolean; default?: boolean; refPrefix?: string; url?: string }, cmd: Command) => {
    if ([given !== undefined || o.url !== undefined, !!o.none, !!o.default].filter(Boolean).length > 1) fail("usage", "give a remote name (or --url), --none or --default, not several");
    const name = given ?? (o.url !== undefined ? COORDINATION_REMOTE : undefined);
    if (o.refPrefix !== undefined && name === undefined) fail("usage", "--ref-prefix goes with a remote name: git handoff remote <name> --ref-prefix refs/heads/<prefix>/");
    await withStore(cmd, async (store, g) => {
      const changed = name !== undefined || o.none || o.default;
      let s: RemoteSetting;
      let created = false;
      if (o.url !== undefined) {
        // setCoordinationRemote checks the name and URL before writing anything; a prefix refused
        // for the new remote takes the new remote back with it: all or nothing.
        const before = await showRemote(store);
        const set = await setCoordinationRemote(store, name!, o.url);
        created = set.created;
        s = set;
        if (o.refPrefix !== undefined) {
          try {
            await setRefPrefixChecked(store, name!, o.refPrefix);
          } catch (e) {
            await undoCoordinationRemote(store, name!, created, before);
            throw e;
          }
          s = await showRemote(store);
        }
      } else {
        // The prefix is checked (and may be refused) before the remote is switched: all or nothing.
        if (o.refPrefix !== undefined) await setRefPrefixChecked(store, name!, o.refPrefix);
        s = changed ? await setRemote(store, o.none ? null : o.default ? undefined : name) : await showRemote(store);
      }
      emit(!!g.json, o.url !== undefined ? { ...s, created } : s, () =>
        (s.remote
          ? `sync remote: ${s.remote}${s.explicit ? "" : " (default)"}${s.url ? `  ${s.url}` : ""}\ntracking:    ${s.tracking}${s.remote_prefix && s.remote_prefix !== "refs/handoff/" ? `\non remote:   ${s.remote_prefix} (branch prefix; see git handoff doctor)` : ""}`
          : `no sync remote${s.explicit ? " (turned off)" : ""}: coordination state stays in this clone`) +
        (o.url !== undefined ? `\n${created ? `added git remote ${s.remote} (no fetch refspec, skipped by git fetch --all)` : `git remote ${s.remote} already had that URL`}; publish with: git handoff sync` : "") +
        // The other half of keeping the user's own git fast: this clone's refs out of its ref namespace.
        (o.url !== undefined && !store.separateStore ? "\nthis clone's own coordination refs still sit among its refs: git handoff store --separate keeps your git fetch and push from listing them" : ""),
      );
    });
  });

  withGlobals(
    program
      .command("sync")
      .description("exchange refs/handoff/* with the sync remote: fetch, fast-forward or replay, push; report conflicts (exit 3 while the remote holds refs kept back here)")
      .option("--repair", "overwrite the remote's refs that failed validation on receive with this clone's state (says what it overwrites; refuses one whose remote value has a higher fence or a live claim or lease this clone's lacks, or that this clone has no value of)")
      .option("--force", "with --repair: overwrite (or delete) those too, once a person has checked the remote's values are not wanted"),
  ).action(async (o: { repair?: boolean; force?: boolean }, cmd: Command) => {
    if (o.force && !o.repair) fail("usage", "--force goes with --repair: git handoff sync --repair --force");
    await withStore(cmd, async (store, g) => {
      const repaired = o.repair ? await repairQuarantined(store, await requireRemote(store), { force: !!o.force }) : [];
      // On a terminal each step is said as it starts; a script reads the report.
      const r = await sync(store, isTerminal(2) ? { progress: (line) => void process.stderr.write(`git-handoff: ${line}\n`) } : {});
      // Each refused ref carries what works for it (--repair, or --repair --force where --repair
      // refuses), in --json as in the text.
      const said = new Set(repaired.filter((p) => p.refused).map((p) => p.ref));
      emit(!!g.json, o.repair ? { ...r, repaired } : r, () => [...repaired.map((p) => repairLine(p, r.remote)), syncText(r), ...quarantineLines(r.remote, r.quarantined, said), ...heldBackLines(r.quarantined)].join("\n"));
      // A sync that kept refs back is not a clean success: a script reads the status (docs/cli.md).
      // The same condition and code as MCP's sync refusal (held-back.ts).
      const held = heldBackRefusal(r);
      if (repaired.some((p) => p.refused)) process.exitCode = EXIT_CODES.unsafe_repair;
      else if (held) process.exitCode = EXIT_CODES[held.code];
    });
  });

  withGlobals(
    program
      .command("sync-conflicts")
      .description("operations that no longer applied at sync (a claim another clone won, a renew after losing the lease)")
      .option("--all", "every agent's, not only the calling agent's")
      .option("--ack", "mark the calling agent's conflicts as read (removes them)"),
    { writes: true },
  ).action(async (o: { all?: boolean; ack?: boolean }, cmd: Command) => {
    await withStore(cmd, async (store, g) => {
      if (o.ack) {
        const n = await ackConflicts(store, store.actor.agent);
        emit(!!g.json, { acknowledged: n }, () => `${n} conflict(s) acknowledged`);
        return;
      }
      const list = await readConflicts(store, o.all ? undefined : store.actor.agent);
      emit(!!g.json, list, () => (list.length ? list.map((c) => `${c.detected_at}  ${c.agent}  ${c.message}`).join("\n") : "no conflicts"));
    });
  });
}

/** One line per ref a repair touched or refused, naming it and why. */
function repairLine(p: Repair, remote: string): string {
  const was = `was ${p.was.slice(0, 12)}, refused: ${p.reason}`;
  if (p.refused) return `not repaired [unsafe_repair]: ${p.ref} on ${remote} (${was}): ${p.refused}; nothing pushed for it (after checking the remote's value, git handoff sync --repair --force ${p.now === null ? "deletes" : "overwrites"} it)`;
  const to = p.now ? `-> this clone's ${p.now.slice(0, 12)}` : "-> deleted";
  return `${p.ok ? "repaired" : "could not repair"}: ${p.ref} on ${remote} (${was}) ${to}${p.forced ? ` (--force: ${p.forced})` : ""}`;
}

/** Newer-format refs are named once, when first seen (render-quarantine.ts); the exit status says it every time. */
function heldBackLines(quarantined: (Quarantined & { new: boolean })[]): string[] {
  const known = quarantined.filter((q) => q.kind === "newer" && !q.new);
  return known.length ? [`still kept back, from a newer git-handoff: ${known.map((q) => q.ref).join(", ")} (upgrade git-handoff to read them)`] : [];
}

export function registerSyncTools(program: Command): void {
  withGlobals(
    program
      .command("fence-check")
      .description("exit 3 unless the calling agent still holds the lease on each task (for the pre-push hook); names the current holder")
      .argument("<tasks...>", "the tasks the work being pushed is for")
      .option("--fence <n>", "the fencing number the work was done under (one task only)"),
    { values: { tasks: "task" } },
  ).action(async (tasks: string[], o: { fence?: string }, cmd: Command) => {
    if (o.fence !== undefined && tasks.length !== 1) fail("usage", "--fence applies to one task");
    const fence = o.fence !== undefined ? parseInteger(o.fence, "--fence", 0) : undefined;
    await withStore(cmd, async (store, g) => {
      const r = await checkFences(store, tasks.map(validateTaskId), fence);
      requireFences(r.verdicts);
      emit(!!g.json, { ok: true, ...r }, () =>
        r.verdicts.map((v) => `ok: ${store.actor.agent} holds ${v.task} (fence ${v.fence}, until ${v.expires_at}; checked against ${r.against} state)`).join("\n"),
      );
    });
  });

  withGlobals(
    program
      .command("compact")
      .description("move finished tasks older than the retention (retention in .handoff.yaml, default 7d) into refs/handoff/archive"),
    { writes: true },
  ).action(async (_o, cmd: Command) => {
    await withStore(cmd, async (store, g) => {
      const r = await compact(store);
      emit(!!g.json, r, () => `archived ${r.archived.length} task(s)${r.archived.length ? `: ${r.archived.join(", ")}` : ""}${r.next_due ? `\nnext due: ${r.next_due}` : ""}`);
    });
  });
}

export function registerDoctor(program: Command): void {
  withGlobals(
    program
      .command("doctor")
      .description("check refspecs, remote reachability, clock skew, tentative operations, locks, objects and invariants (exit 2 on a failed check)")
      .option("--repair", "remove stale lock files and task leases that outlived their work; restore or remove refs whose objects are missing (logged in refs/handoff-local/repair-log)"),
  ).action(
    async (o: { repair?: boolean }, cmd: Command) => {
      await withStore(cmd, async (store, g) => {
        const checks = await doctor(store, { repair: !!o.repair });
        const ok = checks.every((c) => c.status !== "fail");
        emit(!!g.json, { ok, checks }, () => checks.map((c) => `${c.status.padEnd(4)} ${c.name.padEnd(24)} ${c.detail}${c.fix && c.status !== "ok" ? `\n     ${"".padEnd(24)} -> ${c.fix}` : ""}`).join("\n"));
        if (!ok) process.exitCode = 2;
      });
    },
  );
}
