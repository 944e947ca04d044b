// What the consent cards and the settings page's needs-approval rows show (TRUST-1 … TRUST-7),
// as data: the command line as written, the notes of an approval, hint badges, arguments, when a
// card's question is over.

import { describe, expect, it } from "vitest";
import type { ServerApproval } from "../../src/protocol.generated";
import {
  approvalNotes,
  approvalTarget,
  approvedNames,
  argumentsText,
  commandLine,
  DECISIONS,
  endsCard,
  shellQuote,
  toolBadges,
  toolTitle,
} from "../../webview/src/consent";
import { t } from "../../webview/src/i18n";

const approval = (over: Partial<ServerApproval> = {}): ServerApproval => ({
  name: "db",
  configPath: "/work/app/.mcp.json",
  transport: "stdio",
  command: "npx",
  args: ["-y", "db-mcp"],
  envKeys: [],
  variables: [],
  changed: false,
  workspaceUntrusted: false,
  ...over,
});

describe("the command line as written (TRUST-1, TRUST-3)", () => {
  it("shell-quotes each argument that a shell would split or expand, nothing else", () => {
    expect(shellQuote("plain-arg_1.2/x:y@z,=+%")).toBe("plain-arg_1.2/x:y@z,=+%");
    expect(shellQuote("")).toBe("''");
    expect(shellQuote("two words")).toBe("'two words'");
    expect(shellQuote("${DB_PASSWORD}")).toBe("'${DB_PASSWORD}'");
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
    expect(shellQuote("a;rm -rf ~")).toBe("'a;rm -rf ~'");
    expect(shellQuote("$(touch x)`id`")).toBe("'$(touch x)`id`'");
    expect(shellQuote("line\nbreak")).toBe("'line\nbreak'");
  });

  it("joins the command and its arguments, one token each", () => {
    expect(commandLine("sh", ["-c", "touch /tmp/m; exec server --name x"])).toBe("sh -c 'touch /tmp/m; exec server --name x'");
    expect(commandLine("/opt/my tools/run", [])).toBe("'/opt/my tools/run'");
  });

  it("a stdio entry shows its command line, a remote one its URL", () => {
    expect(approvalTarget(approval())).toEqual({ kind: "command", text: "npx -y db-mcp" });
    expect(approvalTarget(approval({ transport: "http", command: undefined, args: [], url: "https://x.example/mcp?k=${KEY}" }))).toEqual({
      kind: "url",
      text: "https://x.example/mcp?k=${KEY}",
    });
  });
});

describe("approval notes (TRUST-1, TRUST-3, TRUST-4)", () => {
  it("nothing to note for a plain entry", () => {
    expect(approvalNotes("en", approval())).toEqual([]);
  });

  it("changed, shadows, env names and the variables whose values are sent", () => {
    const notes = approvalNotes("en", approval({ changed: true, shadows: "user", envKeys: ["DB_URL", "MODE"], variables: ["DB_PASSWORD", "HOME"] }));
    expect(notes.map((n) => n.kind)).toEqual(["changed", "shadows", "envKeys", "variables"]);
    expect(notes.map((n) => n.text)).toEqual([
      "Changed since you approved it.",
      "Replaces your user-level server of the same name in this project.",
      "Sets environment variables: DB_URL, MODE",
      "Reads your environment variables: ${DB_PASSWORD}, ${HOME}. Their values are sent where the entry says.",
    ]);
    expect(approvalNotes("en", approval({ shadows: "plugin" }))[0].text).toBe("Replaces the plugin server of the same name in this project.");
  });

  it("in Chinese too", () => {
    const notes = approvalNotes("zh", approval({ changed: true, shadows: "plugin", envKeys: ["A"], variables: ["B"] }));
    expect(notes.map((n) => n.text)).toEqual([
      "自你上次批准后已被修改。",
      "在此项目中替换同名的插件服务。",
      "设置环境变量：A",
      "读取你的环境变量：${B}。它们的值会按配置发送出去。",
    ]);
  });

  it("answers the names left checked, in the sidecar's order", () => {
    const servers = [approval({ name: "a" }), approval({ name: "b" }), approval({ name: "c" })];
    expect(approvedNames(servers, new Set(["c", "a"]))).toEqual(["a", "c"]);
    expect(approvedNames(servers, new Set())).toEqual([]);
    expect(approvedNames(servers, new Set(["not-asked"]))).toEqual([]);
  });
});

describe("tool confirmation (TRUST-5, TRUST-6)", () => {
  it("badges only for hints set to true, destructive first", () => {
    expect(toolBadges("en", undefined)).toEqual([]);
    expect(toolBadges("en", { title: "x" })).toEqual([]);
    expect(toolBadges("en", { readOnlyHint: false, destructiveHint: false, openWorldHint: false })).toEqual([]);
    const all = toolBadges("en", { openWorldHint: true, readOnlyHint: true, destructiveHint: true });
    expect(all.map((b) => [b.kind, b.label])).toEqual([
      ["destructive", "destructive"],
      ["readOnly", "read-only"],
      ["openWorld", "open world"],
    ]);
    expect(all.every((b) => b.tooltip.length > 0)).toBe(true);
    expect(toolBadges("zh", { destructiveHint: true })[0].label).toBe("破坏性");
  });

  it("the title is the server's, else the tool's name", () => {
    expect(toolTitle({ tool: "drop_table", annotations: { title: "Drop a table" } })).toBe("Drop a table");
    expect(toolTitle({ tool: "drop_table", annotations: { title: "  " } })).toBe("drop_table");
    expect(toolTitle({ tool: "drop_table" })).toBe("drop_table");
    expect(t("en", "confirmToolTitle", { title: "Drop a table" })).toBe("Allow Drop a table?");
  });

  it("arguments as pretty JSON text", () => {
    expect(argumentsText({ table: "users", opts: { cascade: true } })).toBe('{\n  "table": "users",\n  "opts": {\n    "cascade": true\n  }\n}');
    expect(argumentsText(undefined)).toBe("{}");
    expect(argumentsText({ html: "<img src=x onerror=alert(1)>" })).toContain("<img src=x onerror=alert(1)>");
  });

  it("four decisions, in order, each with en and zh text", () => {
    expect(DECISIONS.map((d) => d.decision)).toEqual(["once", "session", "always", "deny"]);
    expect(DECISIONS.map((d) => t("en", d.label))).toEqual(["Allow once", "Allow for this session", "Always allow", "Deny"]);
    expect(DECISIONS.map((d) => t("zh", d.label))).toEqual(["允许一次", "本次会话允许", "始终允许", "拒绝"]);
  });

  it("a turn's end closes its confirmations, and any approval question of that session", () => {
    expect(endsCard({ sessionId: "default", turn: 2 }, { sessionId: "default", turn: 2 })).toBe(true);
    expect(endsCard({ sessionId: "default", turn: 2 }, { sessionId: "default", turn: 1 })).toBe(false);
    expect(endsCard({ sessionId: "default", turn: 2 }, { sessionId: "other", turn: 2 })).toBe(false);
    expect(endsCard({ sessionId: "default" }, { sessionId: "default", turn: 7 })).toBe(true);
    expect(endsCard({ sessionId: "default" }, { sessionId: "other", turn: 7 })).toBe(false);
  });
});
