// A server's log entries as VS Code's log output channel takes them (SRV-2). Pure (no `vscode`
// import), so vitest covers it; extension.ts writes them to one channel per server.

import type { LogEntryView } from "./protocol.generated";

export type ChannelLevel = "trace" | "debug" | "info" | "warn" | "error";

/** The channel's level of an entry: stderr lines and unknown levels are `info`. */
export function channelLevel(entry: LogEntryView): ChannelLevel {
  if (entry.source === "stderr") return "info";
  switch (entry.level) {
    case "debug":
      return "debug";
    case "warning":
      return "warn";
    case "error":
    case "critical":
    case "alert":
    case "emergency":
      return "error";
    default:
      return "info";
  }
}

/** The line written: `[stderr] text`, or `[logger] text` for a message with a logger. */
export function channelText(entry: LogEntryView): string {
  const origin = entry.source === "stderr" ? "[stderr] " : entry.logger ? `[${entry.logger}] ` : "";
  return `${origin}${entry.text}`;
}

/** The channel's name for a server. */
export function channelName(server: string): string {
  return `Wave MCP: ${server}`;
}
