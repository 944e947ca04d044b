// What the user is asked before anything of a project runs or a tool is called (TRUST-1 …
// TRUST-6), as plain data for the chat's cards (consentCards.ts) and the settings page's
// `needs-approval` rows: the command line shown exactly as written and shell-quoted, the notes
// an approval carries, a tool's hint badges, its arguments. Pure module: no DOM, no host.

import type {
  JsonValue,
  McpSource,
  ServerApproval,
  SessionConfirmToolParams,
  ToolAnnotationsView,
  ToolDecision,
} from "../../src/protocol.generated";
import { t, type Lang, type TextKey } from "./i18n";

/**
 * One argument as a POSIX shell would need it written: bare when it has only characters no shell
 * treats specially, else in single quotes (a `'` inside becomes `'\''`). An empty argument is `''`.
 * So the line shows exactly what runs, one token per argument, spaces and `$` included.
 */
export function shellQuote(arg: string): string {
  if (arg !== "" && /^[A-Za-z0-9_@%+=:,./-]+$/.test(arg)) return arg;
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** `command args…` as written (`${VAR}` not expanded), shell-quoted for display. */
export function commandLine(command: string, args: readonly string[]): string {
  return [command, ...args].map(shellQuote).join(" ");
}

/** What approving would start: the command line of a stdio entry, else its URL. */
export function approvalTarget(a: Pick<ServerApproval, "command" | "args" | "url">): { kind: "command" | "url"; text: string } {
  if (a.command !== undefined) return { kind: "command", text: commandLine(a.command, a.args) };
  return { kind: "url", text: a.url ?? "" };
}

/** One line of what an approval means, in the order a card or row shows them. */
export interface ApprovalNote {
  kind: "envKeys" | "variables" | "changed" | "shadows";
  text: string;
}

function sourceText(lang: Lang, source: McpSource): string {
  const key: Record<McpSource, TextKey> = {
    user: "sourceUser",
    project: "sourceProject",
    plugin: "sourcePlugin",
    constructor: "sourceConstructor",
  };
  return t(lang, key[source]);
}

/**
 * The notes of an approval: the environment it sets (names only), the `${VAR}`s of the user's it
 * reads and sends where the entry says, "changed since you approved it" (TRUST-4), and the
 * user or plugin server of the same name it replaces for this project (TRUST-1).
 */
export function approvalNotes(lang: Lang, a: ServerApproval): ApprovalNote[] {
  const notes: ApprovalNote[] = [];
  if (a.changed) notes.push({ kind: "changed", text: t(lang, "approvalChanged") });
  if (a.shadows) {
    const text =
      a.shadows === "user"
        ? t(lang, "approvalShadowsUser")
        : a.shadows === "plugin"
          ? t(lang, "approvalShadowsPlugin")
          : t(lang, "approvalShadowsOther", { source: sourceText(lang, a.shadows) });
    notes.push({ kind: "shadows", text });
  }
  if (a.envKeys.length > 0) notes.push({ kind: "envKeys", text: t(lang, "approvalEnvKeys", { keys: a.envKeys.join(", ") }) });
  if (a.variables.length > 0)
    notes.push({ kind: "variables", text: t(lang, "approvalVariables", { names: a.variables.map((v) => `\${${v}}`).join(", ") }) });
  return notes;
}

export type BadgeKind = "destructive" | "readOnly" | "openWorld" | "idempotent";

export interface Badge {
  kind: BadgeKind;
  label: string;
  tooltip: string;
}

/**
 * The hint badges of a tool, as the server declared them (hints, never guarantees): only the
 * hints set to `true`, the destructive one first. Nothing is inferred from a missing hint.
 */
export function toolBadges(lang: Lang, annotations: ToolAnnotationsView | undefined): Badge[] {
  const badges: Badge[] = [];
  if (annotations?.destructiveHint === true)
    badges.push({ kind: "destructive", label: t(lang, "badgeDestructive"), tooltip: t(lang, "badgeDestructiveHint") });
  if (annotations?.readOnlyHint === true)
    badges.push({ kind: "readOnly", label: t(lang, "badgeReadOnly"), tooltip: t(lang, "badgeReadOnlyHint") });
  if (annotations?.openWorldHint === true)
    badges.push({ kind: "openWorld", label: t(lang, "badgeOpenWorld"), tooltip: t(lang, "badgeOpenWorldHint") });
  if (annotations?.idempotentHint === true)
    badges.push({ kind: "idempotent", label: t(lang, "badgeIdempotent"), tooltip: t(lang, "badgeIdempotentHint") });
  return badges;
}

/** The card's title: the server's `annotations.title`, else the tool's own name. */
export function toolTitle(p: Pick<SessionConfirmToolParams, "tool" | "annotations">): string {
  const title = p.annotations?.title?.trim();
  return title ? title : p.tool;
}

/** The call's arguments as pretty JSON (shown as text, never as markup). */
export function argumentsText(args: { [key: string]: JsonValue } | undefined): string {
  return JSON.stringify(args ?? {}, null, 2);
}

/** The buttons of a tool confirmation, in order. */
export const DECISIONS: { decision: ToolDecision; label: TextKey }[] = [
  { decision: "once", label: "allowOnce" },
  { decision: "session", label: "allowSession" },
  { decision: "always", label: "allowAlways" },
  { decision: "deny", label: "deny" },
];

/** The names the user left checked, in the order the sidecar listed the servers. */
export function approvedNames(servers: readonly ServerApproval[], checked: ReadonlySet<string>): string[] {
  return servers.map((s) => s.name).filter((name) => checked.has(name));
}

/** A card asked in `sessionId` (turn `turn`, when the request names one). */
export interface CardScope {
  sessionId: string;
  turn?: number;
}

/**
 * Whether `wave/session/turnEnded` of (`sessionId`, `turn`) ends the question of a card: the
 * card's own turn, or, for a question that names no turn (`approveServers`, asked before a
 * turn's dials), any turn of that session (a session runs one turn at a time).
 */
export function endsCard(card: CardScope, ended: { sessionId: string; turn: number }): boolean {
  if (card.sessionId !== ended.sessionId) return false;
  return card.turn === undefined || card.turn === ended.turn;
}
