// Who may talk to the dashboard: only a browser that came through the one-time link. The token
// in the printed URL is exchanged once for an HttpOnly cookie and the browser is redirected, so the
// token leaves the address bar (history) and never reaches a Referer. The Host header must name
// 127.0.0.1:PORT exactly (a DNS-rebinding page arrives with its own host name) and an Origin, when
// sent, must be ours; writes must send it.
import { randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

export const COOKIE = "handoff_dashboard";

export class Guard {
  private token: string | null = randomBytes(24).toString("hex");
  private readonly sessions = new Set<string>();
  private port = 0;

  setPort(port: number): void {
    this.port = port;
  }

  get origin(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The link to print; its token works once. */
  link(): string {
    return `${this.origin}/auth?token=${this.token ?? ""}`;
  }

  /** Null when the request may proceed; else why not (always answered 403). */
  refuse(req: IncomingMessage, write: boolean): string | null {
    if (req.headers.host !== `127.0.0.1:${this.port}`) return "wrong Host header";
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== this.origin) return "foreign Origin";
    if (write && origin === undefined) return "a write must come from the dashboard page";
    const fetchSite = req.headers["sec-fetch-site"];
    if (typeof fetchSite === "string" && fetchSite !== "same-origin" && fetchSite !== "none") return "cross-site request";
    return null;
  }

  /** Exchanges the one-time token for a session id (the cookie's value), or null. */
  exchange(token: string | null): string | null {
    if (!token || !this.token || !same(token, this.token)) return null;
    this.token = null;
    const session = randomBytes(24).toString("hex");
    this.sessions.add(session);
    return session;
  }

  hasSession(req: IncomingMessage): boolean {
    const cookie = req.headers.cookie ?? "";
    for (const part of cookie.split(";")) {
      const [k, v] = part.trim().split("=");
      if (k === COOKIE && v && [...this.sessions].some((s) => same(s, v))) return true;
    }
    return false;
  }
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
