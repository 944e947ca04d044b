import { describe, expect, it } from "vitest";
import { channelLevel, channelName, channelText } from "../../src/serverLogs";

describe("SRV-2: a server's log in VS Code's output channel", () => {
  it("maps MCP levels onto the channel's and marks stderr", () => {
    const message = (level: string) => ({ time: "t", source: "message" as const, level, text: "x" });
    expect(["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency", "odd"].map((l) => channelLevel(message(l)))).toEqual([
      "debug",
      "info",
      "info",
      "warn",
      "error",
      "error",
      "error",
      "error",
      "info",
    ]);
    expect(channelLevel({ time: "t", source: "stderr", text: "x" })).toBe("info");
    expect(channelText({ time: "t", source: "stderr", text: "listening" })).toBe("[stderr] listening");
    expect(channelText({ time: "t", source: "message", level: "info", logger: "pool", text: "ok" })).toBe("[pool] ok");
    expect(channelName("db")).toBe("Wave MCP: db");
  });
});
