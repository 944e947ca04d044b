// Shared by the Chromium layer (test/chromium) and the code-server end-to-end tests (tests/e2e):
// how Chromium is started on these machines, and process checks through /proc by pid.

import * as fs from "node:fs";
import * as path from "node:path";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
// Without the background-networking flags Chromium keeps dialing Google's hosts, which a closed
// network refuses.
export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export function pidAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The pids a test server wrote to `<sandbox>/<name>.pid` (server first, then descendants). */
export function serverPids(sandbox, name) {
  try {
    return fs.readFileSync(path.join(sandbox.root, `${name}.pid`), "utf8").split("\n").filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Processes other than this one whose command line mentions `needle` (via /proc). */
export function processesMentioning(needle) {
  return fs
    .readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d) && Number(d) !== process.pid)
    .filter((d) => {
      try {
        return fs.readFileSync(`/proc/${d}/cmdline`, "utf8").includes(needle);
      } catch {
        return false;
      }
    })
    .map(Number);
}
