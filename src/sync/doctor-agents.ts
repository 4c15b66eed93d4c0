// Doctor checks of the agents' own view of our hooks. Codex runs a project hook only in a trusted
// project and once the hook is approved by its content hash, and says nothing when it skips one:
// so ask Codex itself (`codex app-server`, `hooks/list`, as its /hooks screen does). Without a
// codex binary, or without an answer, the status is "unknown", never "ok".
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { CODEX_TRUST_NOTE } from "../setup/hook-install.ts";
import type { Store } from "../store/store.ts";
import type { Check } from "./doctor-check.ts";

const OURS = /git[- ]handoff[- ]hook/;
const ANSWER_WITHIN_MS = 20_000;

export interface ListedHook {
  command?: string;
  trustStatus?: string;
  key?: string;
  currentHash?: string;
}

export async function agentChecks(store: Store): Promise<Check[]> {
  const root = store.repo.workTree;
  if (!root) return [];
  const file = join(root, ".codex/hooks.json");
  if (!existsSync(file) || !OURS.test(readFileSync(file, "utf8"))) return [];
  return [await codexHooks(root)];
}

async function codexHooks(root: string): Promise<Check> {
  const name = "codex hooks";
  // No configuration: Codex trusts no project on this machine. Said without starting it.
  const config = join(process.env.CODEX_HOME || join(homedir(), ".codex"), "config.toml");
  if (!existsSync(config)) return { name, status: "warn", detail: `Codex has no ${config}: the project is not trusted in Codex, so it runs no project hook`, fix: CODEX_TRUST_NOTE };
  let hooks: ListedHook[];
  try {
    hooks = (await codexHooksList(root)).filter((h) => OURS.test(h.command ?? ""));
  } catch (e) {
    return { name, status: "unknown", detail: `could not ask Codex whether it runs the git-handoff hooks (${(e as Error).message})`, fix: CODEX_TRUST_NOTE };
  }
  if (!hooks.length) return { name, status: "warn", detail: "Codex loads no git-handoff hook here: the project is not trusted in Codex", fix: CODEX_TRUST_NOTE };
  const unapproved = hooks.filter((h) => h.trustStatus !== "trusted");
  if (unapproved.length) {
    return { name, status: "warn", detail: `${unapproved.length} of ${hooks.length} git-handoff hook(s) not approved in Codex (${unapproved.map((h) => h.trustStatus ?? "?").join(", ")}): Codex skips them silently`, fix: CODEX_TRUST_NOTE };
  }
  return { name, status: "ok", detail: `Codex runs the ${hooks.length} git-handoff hook(s): project trusted, hooks approved` };
}

/** One JSON-RPC exchange with `codex app-server` over stdio: initialize, then hooks/list for this folder. */
export function codexHooksList(root: string, env: NodeJS.ProcessEnv = process.env): Promise<ListedHook[]> {
  return new Promise((resolve, reject) => {
    const child = spawn("codex", ["app-server"], { cwd: root, env, stdio: ["pipe", "pipe", "ignore"] });
    let buf = "";
    let settled = false;
    const finish = (err: Error | null, hooks: ListedHook[] = []) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill("SIGKILL");
      if (err) reject(err);
      else resolve(hooks);
    };
    const timer = setTimeout(() => finish(new Error(`no answer from codex app-server in ${ANSWER_WITHIN_MS / 1000} s`)), ANSWER_WITHIN_MS);
    child.on("error", (e) => finish(new Error((e as NodeJS.ErrnoException).code === "ENOENT" ? "codex is not on PATH" : e.message)));
    child.on("exit", (code) => finish(new Error(`codex app-server exited ${code}`)));
    child.stdin.on("error", () => {});
    child.stdout.on("data", (d) => {
      buf += d;
      let nl: number;
      while ((nl = buf.indexOf("\n")) !== -1) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        let msg: any;
        try {
          msg = JSON.parse(line);
        } catch {
          continue;
        }
        if (msg.id !== 2) continue;
        if (msg.error) return finish(new Error(`hooks/list: ${msg.error.message ?? JSON.stringify(msg.error)}`));
        const data: any[] = Array.isArray(msg.result?.data) ? msg.result.data : [];
        finish(null, data.flatMap((d) => (Array.isArray(d?.hooks) ? d.hooks : [])));
      }
    });
    const send = (m: object) => child.stdin.write(JSON.stringify({ jsonrpc: "2.0", ...m }) + "\n");
    send({ id: 1, method: "initialize", params: { clientInfo: { name: "git-handoff", version: "1" } } });
    send({ method: "initialized" });
    send({ id: 2, method: "hooks/list", params: { cwds: [root] } });
  });
}
