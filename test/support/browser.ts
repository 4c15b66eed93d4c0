// A real browser for end-to-end tests of the dashboard: Debian's chromium driven by playwright-core
// (no browser download). Headless, no sandbox (CI runs as root), no network chatter, a fresh profile.
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { chromium, type BrowserContext } from "playwright-core";
import { tempDir } from "./repo.ts";

export const CHROMIUM = process.env.HANDOFF_CHROMIUM ?? "/usr/bin/chromium";

/** Screenshots and traces of the browser tests (gitignored). */
export const ARTIFACTS = resolve(import.meta.dirname, "../../test-artifacts/dashboard");

/** A browser with a fresh profile (playwright takes the --user-data-dir as the context's folder). */
export async function launchBrowser(viewport = { width: 1400, height: 900 }): Promise<BrowserContext> {
  return chromium.launchPersistentContext(tempDir("handoff-chromium-"), {
    executablePath: CHROMIUM,
    viewport,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
    timeout: 60_000,
  });
}

export function artifact(name: string): string {
  mkdirSync(ARTIFACTS, { recursive: true });
  return join(ARTIFACTS, name);
}
