// A hook's non-ok answers, logged for `stats` (store/catch-log.ts). Only non-ok answers write, so
// the common case (ok) costs nothing; one event per verdict class per run.
import type { PathAnswer } from "../core/check.ts";
import { catchEvent, recordCatches } from "../store/catch-log.ts";
import type { Store } from "../store/store.ts";

export async function recordHookCatch(store: Store, hook: string, answers: PathAnswer[]): Promise<void> {
  const events = (["deny", "warn", "info"] as const).flatMap((verdict) => {
    const hit = answers.filter((a) => a.verdict === verdict);
    if (!hit.length) return [];
    const top = hit[0]!.holders[0];
    return [
      catchEvent(store, "hook_caught", {
        hook,
        verdict,
        paths: hit.map((a) => a.path),
        task: top?.task ?? "",
        ...(top ? { holder: top.agent } : {}),
      }),
    ];
  });
  await recordCatches(store, events);
}
