// Two clones of one remote that disagree on `--ref-prefix` keep their coordination refs in two
// places there, and neither sees the other's claims and leases (both could be granted one task).
// A full listing also asks for the other namespace's task and lease refs (src/git/ref-prefix.ts);
// `sync` warns and `doctor` fails when it finds any (splitIn). Here: what to say.
import { HANDOFF_ROOT, type NamespaceSplit } from "../git/ref-prefix.ts";

export function splitProblem(remote: string, s: NamespaceSplit): { detail: string; fix: string } {
  const what = [s.tasks ? `${s.tasks} task ref(s)` : "", s.leases ? "a lease ref" : ""].filter(Boolean).join(" and ");
  const branchPrefix = s.prefix === HANDOFF_ROOT ? s.namespace : s.prefix;
  return {
    detail: `${remote} also holds coordination refs under ${s.namespace} (${what}), while this clone keeps its own under ${s.prefix}: clones that disagree on --ref-prefix do not see each other's claims and leases`,
    fix: `make every clone use one place: git handoff remote ${remote} --ref-prefix ${branchPrefix} in each (or --ref-prefix ${HANDOFF_ROOT} in each)`,
  };
}
