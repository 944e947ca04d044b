import { describe, expect, it } from "vitest";
import type { LogEntryView } from "../../src/protocol.generated";
import { LOG_VIEW_ENTRIES, appendLog, levelClass, loadedLog, openLog, shortTime } from "../../webview/src/logView";

const entry = (text: string, over: Partial<LogEntryView> = {}): LogEntryView => ({
  time: "2026-12-05T07:35:47.277Z",
  source: "message",
  level: "info",
  text,
  ...over,
});

describe("SRV-2: a server's log on the settings page", () => {
  it("keeps what was pushed while the log was loading, after it, once", () => {
    let view = openLog("default", "db");
    view = appendLog(view, { sessionId: "default", name: "db", entries: [entry("b"), entry("c")] });
    view = loadedLog(view, { entries: [entry("a"), entry("b")], dropped: 3 });
    expect(view.entries.map((e) => e.text)).toEqual(["a", "b", "c"]);
    expect(view.dropped).toBe(3);
    expect(view.loaded).toBe(true);
  });

  it("takes only its own session's and server's pushes, and keeps the newest entries", () => {
    let view = loadedLog(openLog("default", "db"), { entries: [], dropped: 0 });
    expect(appendLog(view, { sessionId: "other", name: "db", entries: [entry("x")] })).toBe(view);
    expect(appendLog(view, { sessionId: "default", name: "web", entries: [entry("x")] })).toBe(view);
    const many = Array.from({ length: LOG_VIEW_ENTRIES + 5 }, (_, i) => entry(`line ${i}`, { source: "stderr", level: undefined }));
    view = appendLog(view, { sessionId: "default", name: "db", entries: many });
    expect(view.entries).toHaveLength(LOG_VIEW_ENTRIES);
    expect(view.entries[0].text).toBe("line 5");
    expect(view.dropped).toBe(5);
  });

  it("colours by level; stderr has its own; the time is shown short", () => {
    expect(levelClass(entry("x", { level: "warning" }))).toBe("log-warning");
    expect(levelClass(entry("x", { level: "emergency" }))).toBe("log-emergency");
    expect(levelClass(entry("x", { level: "<script>" }))).toBe("log-info");
    expect(levelClass(entry("x", { source: "stderr", level: undefined }))).toBe("log-stderr");
    expect(shortTime("2026-12-05T07:35:47.277Z")).toBe("07:35:47.277");
  });
});
