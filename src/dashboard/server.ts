// The dashboard's HTTP server: one page, its state as JSON, a server-sent event stream that pushes
// the state again whenever a ref changes, filtered event queries, and (unless read-only) actions.
import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { parseSince } from "../core/duration.ts";
import { fail, HandoffError, EXIT_CODES } from "../core/errors.ts";
import { EventType } from "../core/event.ts";
import { validateAgentId, validateTaskId } from "../core/ids.ts";
import { displaySafe } from "../present/display-safe.ts";
import { errorBody } from "../present/output.ts";
import { readEvents, type CommitEvents } from "../store/events.ts";
import type { FreshStore } from "../store/fresh-store.ts";
import type { Store } from "../store/store.ts";
import { runAction } from "./actions.ts";
import { COOKIE, Guard } from "./guard.ts";
import page from "./page.html";
import { buildSnapshot, validUntil, type Snapshot, type SnapshotCache } from "./snapshot.ts";
import { watchRefs, type Watcher } from "./watch.ts";

export interface ServeOptions {
  port: number;
  readOnly: boolean;
  /** Fetch from the sync remote this often (ms); null: never. */
  syncMs: number | null;
  log: (line: string) => void;
}

export interface Dashboard {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Time-based changes (countdowns aside, which the page runs itself): stale agents, expiries. */
const REFRESH_MS = 60_000;
/** How often a page's state is checked against the clock (validUntil). */
const STALE_CHECK_MS = 2_000;
const KEEPALIVE_MS = 25_000;
const MAX_BODY = 16_384;

function hashes(html: string, tag: string): string {
  const re = new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, "g");
  return [...html.matchAll(re)].map((m) => `'sha256-${createHash("sha256").update(m[1]!).digest("base64")}'`).join(" ");
}

const CSP = `default-src 'none'; script-src ${hashes(page, "script")}; style-src ${hashes(page, "style")}; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;

const BASE_HEADERS = {
  "Referrer-Policy": "no-referrer",
  "X-Content-Type-Options": "nosniff",
  "Cache-Control": "no-store",
  "Cross-Origin-Resource-Policy": "same-origin",
};

/**
 * Serves the page and its API. Each request takes the Store from `fresh`, which reopens it when
 * the checked-out branch, the policy or the git config changed while the dashboard runs.
 */
export async function serveDashboard(fresh: FreshStore, opts: ServeOptions): Promise<Dashboard> {
  const store = await fresh.get();
  const guard = new Guard();
  const cache: SnapshotCache = { merges: new Map(), commits: new Map(), lastSync: null, answers: new Map(), mergeFile: true };
  let current: Snapshot | null = null;
  let json = "";
  /** When `current` stops being true by the clock alone (validUntil): a reader then gets a new one. */
  let validTill = 0;
  const stale = () => !current || store.now().getTime() >= validTill;
  let building: Promise<void> | null = null;
  let dirty = false;
  const clients = new Set<ServerResponse>();

  const rebuild = (): Promise<void> => {
    if (building) {
      dirty = true;
      return building;
    }
    building = (async () => {
      do {
        dirty = false;
        try {
          const started = performance.now();
          current = await buildSnapshot(await fresh.get(), cache, opts.readOnly);
          current.build_ms = Math.round(performance.now() - started);
          validTill = validUntil(current, REFRESH_MS);
          json = JSON.stringify(current);
          for (const c of clients) c.write(`event: state\ndata: ${json}\n\n`);
        } catch (e) {
          opts.log(`dashboard: could not read the state: ${(e as Error).message}`);
        }
      } while (dirty);
      building = null;
    })();
    return building;
  };

  const send = (res: ServerResponse, code: number, type: string, body: string, extra: Record<string, string> = {}) => {
    res.writeHead(code, { ...BASE_HEADERS, "Content-Type": type, ...extra });
    res.end(body);
  };
  const sendError = (res: ServerResponse, e: unknown) => {
    const refusal = e instanceof HandoffError ? e.refusal : { code: "internal" as const, message: (e as Error)?.message ?? String(e) };
    const status = refusal.code === "internal" ? 500 : EXIT_CODES[refusal.code] === 2 ? 400 : 409;
    send(res, status, "application/json", JSON.stringify(displaySafe({ error: errorBody(refusal) })));
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", guard.origin);
    const write = req.method !== "GET" && req.method !== "HEAD";
    const why = guard.refuse(req, write);
    if (why) return send(res, 403, "text/plain", `forbidden: ${why}\n`);
    if (url.pathname === "/auth" && req.method === "GET") {
      const session = guard.exchange(url.searchParams.get("token"));
      if (!session) return send(res, 403, "text/plain", "forbidden: this link was already used or is wrong; restart git handoff dashboard for a new one\n");
      // Redirect at once: the token leaves the address bar and history, and no Referer carries it.
      return send(res, 303, "text/plain", "", { Location: "/", "Set-Cookie": `${COOKIE}=${session}; HttpOnly; SameSite=Strict; Path=/` });
    }
    if (url.pathname === "/favicon.ico") return send(res, 204, "text/plain", "");
    if (!guard.hasSession(req)) return send(res, 403, "text/plain", "forbidden: open the link git handoff dashboard printed\n");
    if (req.method === "GET" && url.pathname === "/") return send(res, 200, "text/html; charset=utf-8", page, { "Content-Security-Policy": CSP });
    if (req.method === "GET" && url.pathname === "/api/state") {
      if (stale()) await rebuild();
      return send(res, 200, "application/json", json);
    }
    if (req.method === "GET" && url.pathname === "/api/stream") {
      res.writeHead(200, { ...BASE_HEADERS, "Content-Type": "text/event-stream", Connection: "keep-alive" });
      clients.add(res);
      req.on("close", () => clients.delete(res));
      if (stale()) await rebuild(); // sent to every client, this one with them
      else res.write(`event: state\ndata: ${json}\n\n`);
      return;
    }
    if (req.method === "GET" && url.pathname === "/api/events") {
      try {
        return send(res, 200, "application/json", JSON.stringify(displaySafe(await queryEvents(await fresh.get(), url.searchParams, cache.commits))));
      } catch (e) {
        return sendError(res, e);
      }
    }
    if (req.method === "POST" && url.pathname === "/api/action") {
      if (opts.readOnly) return send(res, 403, "application/json", JSON.stringify({ error: { code: "usage", message: "the dashboard runs read-only" } }));
      try {
        const body = await readBody(req);
        const acting = await fresh.get();
        const r = await runAction(acting, body, current);
        opts.log(`dashboard: ${acting.actor.agent} ${r.done}`);
        await rebuild();
        return send(res, 200, "application/json", JSON.stringify(displaySafe(r)));
      } catch (e) {
        return sendError(res, e);
      }
    }
    return send(res, 404, "text/plain", "not found\n");
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((e) => {
      if (!res.headersSent) sendError(res, e);
      else res.end();
    });
  });
  // Checked before listening: a refusal must not leave a server running.
  const remote = opts.syncMs !== null ? await store.syncRemote() : null;
  if (opts.syncMs !== null && (!remote || !store.remoteGate)) fail("not_found", "--sync needs a sync remote: this repository has no origin and handoff.remote is not set");
  await listen(server, opts.port);
  const port = (server.address() as { port: number }).port;
  guard.setPort(port);

  const watcher: Watcher = watchRefs(store.repo.commonDir, async (prefix) => (await fresh.get()).listRefs(prefix), () => void rebuild(), { filesBackend: store.usesRefFiles });
  const timers = [
    // Pages see a claim's expiry when it happens (nothing moves a ref then), and a state never
    // older than REFRESH_MS.
    setInterval(() => clients.size && stale() && void rebuild(), STALE_CHECK_MS),
    setInterval(() => {
      for (const c of clients) c.write(": keep-alive\n\n");
    }, KEEPALIVE_MS),
  ];
  if (opts.syncMs !== null && remote) {
    const gate = store.remoteGate!;
    let syncing = false;
    timers.push(
      setInterval(async () => {
        if (syncing) return;
        syncing = true;
        try {
          // Fetch and apply only: the dashboard never pushes.
          const r = await gate.refresh(await fresh.get(), remote);
          cache.lastSync = { at: new Date().toISOString(), ok: r.ok, message: r.ok ? null : "the sync remote could not be read" };
        } catch (e) {
          cache.lastSync = { at: new Date().toISOString(), ok: false, message: (e as Error).message };
        } finally {
          syncing = false;
          void rebuild();
        }
      }, opts.syncMs),
    );
  }
  for (const t of timers) t.unref();

  return {
    url: guard.link(),
    port,
    close: async () => {
      watcher.stop();
      for (const t of timers) clearInterval(t);
      for (const c of clients) c.end();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await building;
    },
  };
}

function listen(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", (e: NodeJS.ErrnoException) => {
      if (e.code === "EADDRINUSE") reject(new HandoffError({ code: "port_in_use", message: `port ${port} on 127.0.0.1 is in use: pick another with --port N, or --port 0 for a free one` }));
      else if (e.code === "EACCES") reject(new HandoffError({ code: "invalid_input", message: `port ${port} needs privileges: pick one above 1023, or --port 0` }));
      else reject(e);
    });
    // Never anything but the loopback address: the page can change coordination state.
    server.listen(port, "127.0.0.1", () => resolve());
  });
}

function readBody(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on("data", (b: Buffer) => {
      size += b.length;
      if (size > MAX_BODY) {
        reject(new HandoffError({ code: "invalid_input", message: "request body too large" }));
        req.destroy();
      } else chunks.push(b);
    });
    req.on("end", () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}"));
      } catch {
        reject(new HandoffError({ code: "invalid_input", message: "the request body is not JSON" }));
      }
    });
    req.on("error", reject);
  });
}

async function queryEvents(store: Store, q: URLSearchParams, commits: CommitEvents) {
  const get = (k: string) => {
    const v = q.get(k);
    return v === null || v === "" ? undefined : v;
  };
  const type = get("type");
  if (type !== undefined && !EventType.options.includes(type as EventType)) fail("invalid_input", `unknown event type ${JSON.stringify(type)}`);
  const since = get("since");
  const task = get("task");
  const agent = get("agent");
  const limit = get("limit");
  if (limit !== undefined && !/^\d{1,6}$/.test(limit)) fail("invalid_input", "limit must be a whole number");
  return readEvents(store, {
    ...(since !== undefined ? { since: parseSince(since, store.now()) } : {}),
    ...(task !== undefined ? { task: validateTaskId(task) } : {}),
    ...(agent !== undefined ? { agent: validateAgentId(agent) } : {}),
    ...(type !== undefined ? { type } : {}),
    limit: limit !== undefined ? Number(limit) : 500,
  }, { commits });
}
