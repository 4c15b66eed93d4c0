// Credentials for a remote over HTTP(S), asked of git itself: `git credential fill` runs the
// user's credential helpers (a keychain, `gh auth git-credential`, the store or cache helper) and
// askpass program exactly as `git push` would, with the clone's credential.* settings
// (useHttpPath, usernames by URL). Nothing here stores or prints a secret: a credential lives in
// this process's memory only, for the URL it was given for, and goes out only as that URL's
// Authorization header. Terminal prompts are off (GIT_TERMINAL_PROMPT=0): where only a prompt
// would answer, the request goes to git, which prompts as it always did. A credential refused by
// the remote is not `reject`ed here (that erases it from the helper): git's own request, which
// the caller falls back to, does what git does.
import { git } from "./run.ts";

export interface Credential {
  username: string;
  password: string;
}

/** What git's credential protocol names a URL by: protocol, host (with its port) and path. */
export interface CredentialUrl {
  protocol: "http" | "https";
  /** `host` or `host:port`, as in the URL. */
  host: string;
  /** The URL's path without its leading slash (git drops it unless credential.useHttpPath). */
  path: string;
}

/** The credential git's helpers give for `url`, or null (none without a prompt, a helper failed, the deadline). */
export async function fillCredential(cwd: string, url: CredentialUrl, timeoutMs: number): Promise<Credential | null> {
  if (timeoutMs <= 0 || !safe(url)) return null;
  const r = await git(["credential", "fill"], { cwd, input: describe(url), env: { GIT_TERMINAL_PROMPT: "0" }, timeoutMs }).catch(() => null);
  if (!r || r.code !== 0 || r.timedOut) return null;
  const got = new Map<string, string>();
  for (const line of r.stdout.split("\n")) {
    const eq = line.indexOf("=");
    if (eq > 0) got.set(line.slice(0, eq), line.slice(eq + 1));
  }
  const username = got.get("username");
  const password = got.get("password");
  // A helper answering for another host or protocol (git checks this too) is not used.
  if (username === undefined || password === undefined || got.get("host") !== url.host || got.get("protocol") !== url.protocol) return null;
  return { username, password };
}

/** Tells git's helpers the credential worked (what git does after a request it authenticated). */
export async function approveCredential(cwd: string, url: CredentialUrl, cred: Credential, timeoutMs: number): Promise<void> {
  if (timeoutMs <= 0 || !safe(url) || /[\0\n]/.test(cred.username + cred.password)) return;
  await git(["credential", "approve"], { cwd, input: `${describe(url).trimEnd()}\nusername=${cred.username}\npassword=${cred.password}\n\n`, env: { GIT_TERMINAL_PROMPT: "0" }, timeoutMs }).catch(() => null);
}

/** The Authorization header a credential makes (Basic, as git sends it). */
export function basicAuth(cred: Credential): string {
  return `Basic ${Buffer.from(`${cred.username}:${cred.password}`, "utf8").toString("base64")}`;
}

function describe(url: CredentialUrl): string {
  return `protocol=${url.protocol}\nhost=${url.host}\npath=${url.path}\n\n`;
}

/** git's protocol is one `key=value` a line: a value with a newline or NUL cannot be said in it. */
function safe(url: CredentialUrl): boolean {
  return !/[\0\n]/.test(url.host + url.path);
}
