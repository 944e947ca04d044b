// Which `wave-mcp` binary the extension runs. Pure (node:fs only, no `vscode`), so vitest covers it.

import * as fs from "node:fs";
import * as path from "node:path";

export interface SidecarLookup {
  /** `wave.sidecarPath`, possibly empty. */
  setting?: string;
  /** The extension's install directory (holds `bin/wave-mcp` in a packaged .vsix). */
  extensionPath: string;
  /** Workspace folders, searched for `target/release` and `target/debug` builds. */
  workspaceFolders: string[];
  /**
   * Whether the user trusts the workspace (`workspace.isTrusted`). A binary inside an untrusted
   * workspace is the repository's code: it is never run (TRUST-9).
   */
  workspaceTrusted: boolean;
  platform?: NodeJS.Platform;
}

export interface SidecarChoice {
  path: string;
  origin: "setting" | "bundled" | "workspace";
}

function isFile(p: string): boolean {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

/** The candidates in order of preference. */
export function sidecarCandidates(lookup: SidecarLookup): SidecarChoice[] {
  const exe = (lookup.platform ?? process.platform) === "win32" ? "wave-mcp.exe" : "wave-mcp";
  const list: SidecarChoice[] = [];
  const setting = lookup.setting?.trim();
  if (setting) list.push({ path: setting, origin: "setting" });
  list.push({ path: path.join(lookup.extensionPath, "bin", exe), origin: "bundled" });
  for (const folder of lookup.workspaceTrusted ? lookup.workspaceFolders : []) {
    list.push({ path: path.join(folder, "target", "release", exe), origin: "workspace" });
    list.push({ path: path.join(folder, "target", "debug", exe), origin: "workspace" });
  }
  return list;
}

/**
 * The setting wins when set (and is an error when its file is missing: a typo must not silently
 * run another binary); else the bundled binary; else a workspace build.
 */
export function resolveSidecar(lookup: SidecarLookup, exists: (p: string) => boolean = isFile): SidecarChoice {
  const candidates = sidecarCandidates(lookup);
  const first = candidates[0];
  if (first?.origin === "setting") {
    if (!exists(first.path)) throw new Error(`wave.sidecarPath points to ${first.path}, which is not a file`);
    return first;
  }
  const found = candidates.find((c) => exists(c.path));
  if (!found)
    throw new Error(
      `no wave-mcp binary found: set wave.sidecarPath, or build it (cargo build --bin wave-mcp) in a trusted workspace. Looked at: ${candidates
        .map((c) => c.path)
        .join(", ")}`,
    );
  return found;
}
