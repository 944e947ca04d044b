// A server's log on the settings page (SRV-2): what `wave/mcp/logs` returned, followed by
// `wave/mcp/logAppended`. Pure module: no DOM, no host.

import type { LogEntryView, McpLogAppendedParams, McpLogsResult } from "../../src/protocol.generated";

/** The most entries the page keeps, like the sidecar. */
export const LOG_VIEW_ENTRIES = 2000;

export interface LogView {
  sessionId: string;
  name: string;
  entries: LogEntryView[];
  /** Entries no longer shown: dropped by the sidecar, then by the page. */
  dropped: number;
  /** Keep the newest entry in sight as entries come. */
  follow: boolean;
  loaded: boolean;
  error?: string;
}

export function openLog(sessionId: string, name: string): LogView {
  return { sessionId, name, entries: [], dropped: 0, follow: true, loaded: false };
}

/** The sidecar's answer; entries pushed while it was on its way are kept after it. */
export function loadedLog(view: LogView, result: McpLogsResult): LogView {
  const pushed = view.entries.filter((e) => !result.entries.some((r) => sameEntry(r, e)));
  return bounded({ ...view, entries: [...result.entries, ...pushed], dropped: result.dropped, loaded: true });
}

/** A push: appended when it is this view's session and server. */
export function appendLog(view: LogView, push: McpLogAppendedParams): LogView {
  if (push.sessionId !== view.sessionId || push.name !== view.name || push.entries.length === 0) return view;
  return bounded({ ...view, entries: [...view.entries, ...push.entries] });
}

function bounded(view: LogView): LogView {
  const over = view.entries.length - LOG_VIEW_ENTRIES;
  if (over <= 0) return view;
  return { ...view, entries: view.entries.slice(over), dropped: view.dropped + over };
}

function sameEntry(a: LogEntryView, b: LogEntryView): boolean {
  return a.time === b.time && a.source === b.source && a.text === b.text && a.level === b.level;
}

/** The CSS class of an entry's level: `log-stderr`, or `log-<level>` for a message. */
export function levelClass(entry: LogEntryView): string {
  if (entry.source === "stderr") return "log-stderr";
  const level = entry.level ?? "info";
  return /^(debug|info|notice|warning|error|critical|alert|emergency)$/.test(level) ? `log-${level}` : "log-info";
}

/** The time as the page shows it: `HH:MM:SS.mmm` of the RFC 3339 stamp (UTC). */
export function shortTime(time: string): string {
  const match = /T(\d\d:\d\d:\d\d(?:\.\d{1,3})?)/.exec(time);
  return match ? match[1] : time;
}
