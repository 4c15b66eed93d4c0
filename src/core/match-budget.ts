// How much glob matching one local check may do: the edit hooks' and `check`'s answer for a path,
// a claim's overlap advisory. Patterns are bounded one by one (paths.ts patternProblem), but a lease
// set of many bounded-yet-expensive patterns (64 alternatives of 1,000 characters of stars each)
// took over three minutes of one check's CPU, in every hook. Past the budget a check stops looking
// and answers "may be leased" naming the budget (check.ts), never "free"; the advisory says what it
// did not look at (claim-overlap.ts). A grant that cannot compare within its budget refuses
// (lease-ops.ts, too_costly), and a received ref that cannot is refused (validate-receive.ts).
import { groupDigits } from "./digits.ts";

/**
 * Units of matching work, each about a microsecond on the machine docs/performance.md measured
 * in a hook's fresh process (within a factor of three either way): compiling a glob 200 and four
 * a character of each of its alternatives, a match against a compiled glob two an alternative,
 * the overlap search one a state and one a character it tries. Folder globs (`src/**`) and plain paths matched against a path
 * cost nothing. About 0.1 to 0.4 s of one check's CPU here.
 */
export const LOCAL_MATCH_BUDGET = 250_000;

/**
 * What deciding one grant (a lease, a claim's scope leases, a lease write replayed at sync) may do:
 * about a second. 1,000 leases of ordinary shapes (folders, `src/**\/*.ts`, files) near a claim's
 * scope take a few thousand units; past it the grant is refused (too_costly), never made blindly.
 */
export const GRANT_MATCH_BUDGET = 2_000_000;

/**
 * What judging the new commits of one ref from another clone may do: under ~2 s here. An honest
 * step compares a few new leases with the live leases near them, far less; past it the ref is
 * refused as invalid (quarantined) with a reason naming the budget.
 */
export const RECEIVE_MATCH_BUDGET = 4_000_000;

export interface MatchBudget {
  left: number;
}

/**
 * Thrown where the budget is spent, and caught by withinBudget around the work of the check that
 * set it. One object: after the budget ran out every lease left may throw it.
 */
export const MATCH_BUDGET_SPENT = new Error("the budget of glob matching is spent");

export function newMatchBudget(units = LOCAL_MATCH_BUDGET): MatchBudget {
  return { left: units };
}

/**
 * Takes `units` from the budget (none without one); throws MATCH_BUDGET_SPENT once it is spent.
 * `spend(work, 0)` before costly work: a spent budget starts nothing more.
 */
export function spend(budget: MatchBudget | undefined, units: number): void {
  if (budget && (budget.left -= units) < 0) throw MATCH_BUDGET_SPENT;
}

/** What withinBudget gives when the budget ran out inside the work. */
export const SPENT: unique symbol = Symbol("match budget spent");

/**
 * `work()`'s answer, or SPENT when the budget of matching ran out inside it (the one place that
 * catches MATCH_BUDGET_SPENT; any other error goes on): each caller decides what a lease it could
 * not look at means for its answer.
 */
export function withinBudget<T>(work: () => T): T | typeof SPENT {
  try {
    return work();
  } catch (e) {
    if (e !== MATCH_BUDGET_SPENT) throw e;
    return SPENT;
  }
}

/** What a check says of what it could not look at within the budget. */
export const BUDGET_NOTE = `its leases' globs took more than the budget of matching one check may do (${groupDigits(LOCAL_MATCH_BUDGET)} units), so some were not looked at`;
