import * as z from "zod/mini";
import { parseDuration } from "./duration.ts";

/** `.handoff.yaml` at the repository root: committed policy shared by every agent. */
export const ConfigFile = z.strictObject({
  version: z.optional(z.literal(1)),
  /** Default lease of a task claim, as a duration (`30m`). */
  claim_ttl: z.optional(z.string()),
  /** Grants that may expire without completion before the task is marked failed. */
  max_attempts: z.optional(z.int().check(z.gte(1), z.lte(100))),
  /** How long finished tasks stay live before compaction moves them to refs/handoff/archive (`7d`). */
  retention: z.optional(z.string()),
});
export type ConfigFile = z.infer<typeof ConfigFile>;

export interface Config {
  claimTtlMs: number;
  maxAttempts: number;
  retentionMs: number;
}

export const DEFAULT_CONFIG: Config = { claimTtlMs: 30 * 60_000, maxAttempts: 3, retentionMs: 7 * 24 * 3_600_000 };

export function resolveConfig(file: ConfigFile): Config {
  return {
    claimTtlMs: file.claim_ttl ? parseDuration(file.claim_ttl, "claim_ttl in .handoff.yaml") : DEFAULT_CONFIG.claimTtlMs,
    maxAttempts: file.max_attempts ?? DEFAULT_CONFIG.maxAttempts,
    retentionMs: file.retention ? parseDuration(file.retention, "retention in .handoff.yaml") : DEFAULT_CONFIG.retentionMs,
  };
}
