// Suggested values in the chat input (SRV-3): which prompt argument or resource template
// variable the cursor is in, what the user has typed of it, the arguments already given (the
// `context` of `wave/mcp/complete`), and what picking a value does to the input. Pure, for the
// unit tests; `CompletionMenu` asks the sidecar and shows the values.
//
// A prompt's arguments follow `/mcp__<server>__<prompt>` as the sidecar reads them (PRM-2):
// whitespace separates them, double or single quotes keep spaces (`\"` and `\\` inside double
// quotes), `key=value` names a declared argument and the other words fill the remaining ones
// in order. A template variable is a `{…}` of a resource template (RFC 6570) in an
// `@<server>:<uri>` mention, filled in or still the `{…}` itself (then selected).

import type { CompletionRef, McpPromptView, McpResourceTemplateView } from "../../src/protocol.generated";

/** What to ask `wave/mcp/complete` for, and the part of the input a picked value replaces. */
export interface ValueTarget {
  server: string;
  ref: CompletionRef;
  argument: string;
  /** What the user has typed of it, up to the cursor (quotes removed). */
  value: string;
  /** The other arguments or variables already given. */
  context: Record<string, string>;
  /** `[start, end)` of the input that a picked value replaces. */
  start: number;
  end: number;
  /** A prompt argument: a value with spaces or quotes is quoted, and a space follows it. */
  promptArgument: boolean;
}

/** One argument word as typed: its span, and where its value starts (after `key=`). */
interface Word {
  start: number;
  end: number;
  valueStart: number;
  key?: string;
}

/** Splits `text` from `from` on into argument words, as the sidecar does (an unclosed quote runs to the end). */
function words(text: string, from: number): Word[] {
  const found: Word[] = [];
  let i = from;
  while (i < text.length) {
    while (i < text.length && /\s/.test(text[i])) i++;
    if (i >= text.length) break;
    const word: Word = { start: i, end: i, valueStart: i };
    let quoted = false;
    while (i < text.length && !/\s/.test(text[i])) {
      const c = text[i++];
      if (c === '"' || c === "'") {
        quoted = true;
        while (i < text.length && text[i] !== c) i += c === '"' && text[i] === "\\" ? 2 : 1;
        i = Math.min(i + 1, text.length);
      } else if (c === "=" && word.key === undefined && !quoted) {
        word.key = text.slice(word.start, i - 1);
        word.valueStart = i;
      }
    }
    word.end = i;
    found.push(word);
  }
  return found;
}

/** A typed value without its quotes (and an unclosed quote's opening one). */
export function unquote(raw: string): string {
  let out = "";
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (c !== '"' && c !== "'") {
      out += c;
      continue;
    }
    for (i++; i < raw.length && raw[i] !== c; i++) {
      if (c === '"' && raw[i] === "\\" && (raw[i + 1] === '"' || raw[i + 1] === "\\")) i++;
      out += raw[i] ?? "";
    }
  }
  return out;
}

/** `value` as one argument word: quoted when it is empty or has spaces, quotes or backslashes. */
export function quoteValue(value: string): string {
  if (value !== "" && !/[\s"'\\]/.test(value)) return value;
  return `"${value.replace(/[\\"]/g, "\\$&")}"`;
}

/**
 * The prompt argument the cursor is in, when the input is `/<fullName> …` of one of `prompts`
 * with arguments and the cursor is past the command; undefined otherwise (also past the last
 * declared argument).
 */
export function promptArgumentAt(text: string, cursor: number, prompts: McpPromptView[]): ValueTarget | undefined {
  const command = /^\/(\S+)\s/.exec(text);
  if (!command || cursor < command[0].length) return undefined;
  const prompt = prompts.find((p) => p.fullName === command[1]);
  if (!prompt || prompt.arguments.length === 0) return undefined;
  const typed = words(text, command[0].length);
  let current = typed.findIndex((w) => w.start <= cursor && cursor <= w.end);
  if (current < 0) {
    current = typed.filter((w) => w.end < cursor).length;
    typed.splice(current, 0, { start: cursor, end: cursor, valueStart: cursor });
  }
  const declared = prompt.arguments.map((a) => a.name);
  const named = new Map<number, string>();
  typed.forEach((w, i) => {
    if (w.key !== undefined && declared.includes(w.key)) named.set(i, w.key);
  });
  // The other words fill the declared arguments not named, in order (the sidecar's rule).
  const open = declared.filter((name) => ![...named.values()].includes(name));
  let next = 0;
  const assigned = typed.map((_, i) => named.get(i) ?? open[next++]);
  const argument = assigned[current];
  if (argument === undefined) return undefined;
  const word = typed[current];
  const valueStart = named.has(current) ? word.valueStart : word.start;
  const context: Record<string, string> = {};
  typed.forEach((w, i) => {
    const name = assigned[i];
    if (i === current || name === undefined) return;
    context[name] = unquote(text.slice(named.has(i) ? w.valueStart : w.start, w.end));
  });
  return {
    server: prompt.server,
    ref: { type: "ref/prompt", name: prompt.name },
    argument,
    value: unquote(text.slice(valueStart, Math.max(valueStart, cursor))),
    context,
    start: valueStart,
    end: word.end,
    promptArgument: true,
  };
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * A template as patterns with a group per expression (its value, or the `{…}` itself): `whole`
 * matches a whole URI, `typed` the start of one that ends inside an expression (the user is
 * typing it); `names` are the expressions' names (operator, modifiers and further names dropped).
 */
function templatePattern(uriTemplate: string): { whole: RegExp; typed: RegExp; names: string[] } {
  const names: string[] = [];
  const literals: string[] = [];
  const groups: string[] = [];
  let literal = "";
  for (const part of uriTemplate.split(/(\{[^{}]*\})/)) {
    const expression = /^\{([+#./;?&]?)([^{}]*)\}$/.exec(part);
    if (!expression) {
      literal += escape(part);
      continue;
    }
    names.push(expression[2].split(",")[0].replace(/(\*|:\d+)$/, ""));
    const reserved = expression[1] === "+" || expression[1] === "#";
    literals.push(literal);
    literal = "";
    groups.push(`(${escape(part)}|${reserved ? "[^\\s{}]*" : "[^/?#&\\s{}]*"})`);
  }
  const whole = literals.map((l, i) => l + groups[i]).join("") + literal;
  // lit0 g0 (?: lit1 g1 (?: lit2 g2 )? )?: the text may stop in any expression.
  let typed = "";
  for (let i = groups.length - 1; i >= 0; i--) typed = `${literals[i]}${groups[i]}${typed ? `(?:${typed})?` : ""}`;
  return { whole: new RegExp(`^${whole}$`, "d"), typed: new RegExp(`^${typed}$`, "d"), names };
}

/**
 * The resource template variable the cursor is in, inside an `@<server>:<uri>` mention that
 * fits one of `templates`: a value being typed, or the `{…}` itself when it is selected
 * (`selectionEnd` at its end).
 */
export function templateVariableAt(
  text: string,
  cursor: number,
  selectionEnd: number,
  templates: McpResourceTemplateView[],
): ValueTarget | undefined {
  const start = text.slice(0, cursor).search(/\S*$/);
  const rest = text.slice(start).search(/\s|$/);
  const word = text.slice(start, start + rest);
  if (!word.startsWith("@")) return undefined;
  for (const template of templates) {
    const prefix = `@${template.server}:`;
    if (!word.startsWith(prefix)) continue;
    const uriStart = start + prefix.length;
    const { whole, typed, names } = templatePattern(template.uriTemplate);
    const uri = word.slice(prefix.length);
    // A whole URI, or one typed up to the cursor at the word's end.
    const match = whole.exec(uri) ?? (cursor === start + rest ? typed.exec(uri) : null);
    if (!match?.indices) continue;
    const at = cursor - uriStart;
    const found = names.findIndex((_, i) => {
      const [s, e] = match.indices?.[i + 1] ?? [-1, -1];
      return s <= at && at <= e;
    });
    if (found < 0) continue;
    const [s, e] = match.indices[found + 1];
    const placeholder = /^\{.*\}$/.test(match[found + 1]);
    if (placeholder && !(at === s && selectionEnd - uriStart === e)) continue;
    const context: Record<string, string> = {};
    names.forEach((name, i) => {
      const value = match[i + 1];
      if (i !== found && value && !/^\{.*\}$/.test(value)) context[name] = value;
    });
    return {
      server: template.server,
      ref: { type: "ref/resource", uri: template.uriTemplate },
      argument: names[found],
      value: placeholder ? "" : match[found + 1].slice(0, at - s),
      context,
      start: uriStart + s,
      end: uriStart + e,
      promptArgument: false,
    };
  }
  return undefined;
}

/** The same question to the server: a new one is asked only when this changes. */
export function targetKey(target: ValueTarget): string {
  return JSON.stringify([target.server, target.ref, target.argument, target.value, target.context, target.start]);
}

/**
 * The input after picking `value` for `target`, and where the cursor goes: after a prompt
 * argument (quoted as needed) and a space, so that the next argument can follow; after a template
 * variable, or on the mention's next `{…}`, selected.
 */
export function applyValue(text: string, target: ValueTarget, value: string): { text: string; cursor: number; select?: { start: number; end: number } } {
  const before = text.slice(0, target.start);
  const after = text.slice(target.end);
  if (target.promptArgument) {
    const inserted = `${quoteValue(value)} `;
    return { text: before + inserted + after.replace(/^ /, ""), cursor: before.length + inserted.length };
  }
  const next = before + value + after;
  const cursor = before.length + value.length;
  const mentionEnd = cursor + after.search(/\s|$/);
  const variable = /\{[^{}]*\}/.exec(next.slice(cursor, mentionEnd));
  if (!variable) return { text: next, cursor };
  const start = cursor + variable.index;
  return { text: next, cursor, select: { start, end: start + variable[0].length } };
}
