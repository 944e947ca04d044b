// The chat input's menus (PRM-1, PRM-3): typing `/` at the start offers the servers' prompts as
// `/mcp__<server>__<prompt>` commands with their descriptions and argument hints; typing `@`
// at the start of a word offers resources as `@<server>:<uri>`, then resource templates as
// `@<server>:<uriTemplate>` with its first `{…}` selected for the user to fill in. The lists come from
// `wave/mcp/prompts` and `wave/mcp/resources`, asked when a menu opens and again after a
// `wave/mcp/serversChanged` (a connect, or a server's list_changed: PRM-4). Arrow keys move,
// Enter or Tab inserts, Escape closes. An input that is exactly a local command (`/mcp`, UI-1)
// opens the menu with no row selected, so Enter runs the command, as typed; an arrow key selects
// a row, and then Enter inserts it (Tab inserts the first row). The pure part (what to offer,
// what is selected, what inserting does) is exported for the unit tests; `CompletionMenu` is the
// DOM part.
//
// SRV-3: once a prompt is chosen, the cursor in one of its arguments (and in an `@` mention, in a
// resource template's variable) asks `wave/mcp/complete` for values, 150 ms after the last key;
// an answer to a question the input no longer asks is dropped. Values, when there are any, are the
// menu (picked like its other rows); a template variable with none keeps the resource list.

import type { McpPromptView, McpResourceTemplateView, McpResourceView } from "../../src/protocol.generated";
import type { HostBridge } from "./bridge";
import { inputAction } from "./chatState";
import { h } from "./dom";
import { applyValue, promptArgumentAt, targetKey, templateVariableAt, type ValueTarget } from "./valueCompletion";

/** Where the menu was opened: the text it replaces is `[start, end)` of the input. */
export interface Trigger {
  kind: "prompt" | "resource" | "value";
  query: string;
  start: number;
  end: number;
}

export interface MenuItem {
  /** What replaces the trigger's text (a space follows). */
  insert: string;
  /** Argument hint: `<required> [optional]`. */
  hint: string;
  detail: string;
  /** A resource template: after inserting, its first `{…}` expression is selected. */
  template?: boolean;
  /** A suggested value for this argument or variable (SRV-3). */
  value?: ValueTarget;
}

/** The menu that the text before `cursor` asks for, if any. */
export function triggerAt(text: string, cursor: number): Trigger | undefined {
  const before = text.slice(0, cursor);
  const command = /^\/(\S*)$/.exec(before);
  if (command) return { kind: "prompt", query: command[1], start: 0, end: cursor };
  const mention = /(^|\s)@(\S*)$/.exec(before);
  if (mention) return { kind: "resource", query: mention[2], start: cursor - mention[2].length - 1, end: cursor };
  return undefined;
}

export function argumentHint(prompt: McpPromptView): string {
  return prompt.arguments.map((a) => (a.required ? `<${a.name}>` : `[${a.name}]`)).join(" ");
}

function matches(query: string, ...texts: (string | undefined)[]): boolean {
  const q = query.toLowerCase();
  return texts.some((t) => t !== undefined && t.toLowerCase().includes(q));
}

export function promptItems(prompts: McpPromptView[], query: string): MenuItem[] {
  return prompts
    .filter((p) => matches(query, p.fullName, p.description))
    .map((p) => ({ insert: `/${p.fullName}`, hint: argumentHint(p), detail: p.description ?? "" }));
}

export function resourceItems(resources: McpResourceView[], query: string): MenuItem[] {
  return resources
    .filter((r) => matches(query, `${r.server}:${r.uri}`, r.name, r.description))
    .map((r) => ({
      insert: `@${r.server}:${r.uri}`,
      hint: r.mimeType ?? "",
      detail: r.description ? `${r.name} — ${r.description}` : r.name,
    }));
}

/**
 * Resource templates (RFC 6570 `uriTemplate`, PRM-3) as `@server:template`, after the
 * resources: the user picks one and fills in its variables.
 */
export function templateItems(templates: McpResourceTemplateView[], query: string): MenuItem[] {
  const asResources = templates.map((r) => ({ ...r, uri: r.uriTemplate }));
  return resourceItems(asResources, query).map((item) => ({ ...item, template: true }));
}

/**
 * The input after inserting `item` for `trigger`, and where the cursor goes; for a template, the
 * selection covers its first `{…}` so that typing replaces it.
 */
export function applyItem(text: string, trigger: Trigger, item: MenuItem): { text: string; cursor: number; select?: { start: number; end: number } } {
  const rest = text.slice(trigger.end).replace(/^\S*/, "");
  const inserted = `${item.insert} `;
  const next = { text: text.slice(0, trigger.start) + inserted + rest.replace(/^ /, ""), cursor: trigger.start + inserted.length };
  const variable = item.template ? /\{[^{}]*\}/.exec(item.insert) : null;
  if (!variable) return next;
  const start = trigger.start + variable.index;
  return { ...next, select: { start, end: start + variable[0].length } };
}

/**
 * The row selected when the menu opens or its query changes: none (-1) when Send would run the
 * input as a local command (`/mcp` opens the settings page, UI-1), else the first.
 */
export function initialActive(text: string): number {
  return inputAction(text).kind === "openSettings" ? -1 : 0;
}

/** The row selected after an arrow key (`by` is 1 or -1); from none, down is the first, up the last. */
export function moveActive(active: number, by: number, count: number): number {
  if (active < 0) return by > 0 ? 0 : count - 1;
  return (active + by + count) % count;
}

/**
 * A list asked from the sidecar once and kept until `invalidate()`. A request that was on its way
 * when `invalidate()` ran is not kept (its answer may predate the change): `get()` asks again.
 * Generations tell the two apart; a failed request is not kept either.
 */
export class FetchedList<T> {
  private generation = 0;
  private value?: Promise<T>;

  constructor(private readonly fetch: () => Promise<T>) {}

  invalidate(): void {
    this.generation++;
    this.value = undefined;
  }

  async get(): Promise<T> {
    for (;;) {
      const generation = this.generation;
      const value = (this.value ??= this.fetch());
      let result: T;
      try {
        result = await value;
      } catch (e) {
        if (this.value === value) this.value = undefined;
        throw e;
      }
      if (generation === this.generation) return result;
    }
  }
}

/** At most this many rows are shown; typing narrows the list. */
const MAX_ROWS = 50;

/** How long after the last key `wave/mcp/complete` is asked (SRV-3). */
const COMPLETE_DEBOUNCE_MS = 150;

export class CompletionMenu {
  private readonly prompts: FetchedList<McpPromptView[]>;
  private readonly resources: FetchedList<{ resources: McpResourceView[]; templates: McpResourceTemplateView[] }>;
  private trigger?: Trigger;
  private items: MenuItem[] = [];
  private active = 0;
  /** The close a blur of the input scheduled, until the input is focused again. */
  private blurClose?: ReturnType<typeof setTimeout>;
  /** The value question asked or waiting to be asked (SRV-3), and its number. */
  private valueKey?: string;
  private valueTicket = 0;
  private valueTimer?: ReturnType<typeof setTimeout>;
  readonly element: HTMLElement;

  constructor(
    private readonly input: HTMLTextAreaElement,
    private readonly bridge: HostBridge,
    private readonly sessionId: string,
  ) {
    this.prompts = new FetchedList(async () => (await bridge.request("wave/mcp/prompts", { sessionId })).prompts);
    this.resources = new FetchedList(() => bridge.request("wave/mcp/resources", { sessionId }));
    this.element = h("div", { class: "completion-menu", id: "completion-menu", role: "listbox", hidden: true });
    input.setAttribute("aria-autocomplete", "list");
    input.setAttribute("aria-controls", "completion-menu");
    input.setAttribute("aria-expanded", "false");
    // Registered before the page's own keydown listener: a key the menu uses goes no further.
    input.addEventListener("keydown", (ev) => this.onKey(ev));
    input.addEventListener("input", () => void this.update());
    input.addEventListener("click", () => void this.update());
    // Leaving the input closes the menu a moment later (a click on a row keeps the focus, see
    // `render`). The input focused again before then keeps its menu: a late close from an
    // earlier blur (a click on Send, then typing `@` at once) would shut the one just opened.
    input.addEventListener("blur", () => {
      clearTimeout(this.blurClose);
      this.blurClose = setTimeout(() => {
        this.blurClose = undefined;
        if (document.activeElement !== this.input) this.close();
      }, 150);
    });
    input.addEventListener("focus", () => {
      clearTimeout(this.blurClose);
      this.blurClose = undefined;
    });
  }

  /** The servers changed: ask for the lists again (now if a menu is open). */
  invalidate(): void {
    this.prompts.invalidate();
    this.resources.invalidate();
    if (this.trigger) void this.update();
  }

  get isOpen(): boolean {
    return this.trigger !== undefined && this.items.length > 0;
  }

  private async update(): Promise<void> {
    const target = await this.valueTarget();
    if (target) {
      const key = targetKey(target);
      if (key === this.valueKey) return;
      // A prompt argument shows values only; a template variable keeps the resource list meanwhile.
      if (target.promptArgument && this.trigger?.kind !== "value") this.close();
      this.askValues(target, key);
      if (target.promptArgument) return;
    } else this.dropValues();
    await this.showList();
  }

  /** The argument or template variable the cursor is in, if any (SRV-3). */
  private async valueTarget(): Promise<ValueTarget | undefined> {
    const text = this.input.value;
    const cursor = this.input.selectionStart ?? text.length;
    try {
      if (/^\/\S+\s/.test(text)) return promptArgumentAt(text, cursor, await this.prompts.get());
      if (!/(^|\s)@\S*$/.test(text.slice(0, cursor))) return undefined;
      const { templates } = await this.resources.get();
      return templateVariableAt(text, cursor, this.input.selectionEnd ?? cursor, templates);
    } catch {
      return undefined;
    }
  }

  /** Asks `wave/mcp/complete` for `target` once the keys stop; a newer question drops this one. */
  private askValues(target: ValueTarget, key: string): void {
    this.dropValues();
    this.valueKey = key;
    const ticket = this.valueTicket;
    this.valueTimer = setTimeout(() => void this.showValues(target, ticket), COMPLETE_DEBOUNCE_MS);
  }

  private dropValues(): void {
    clearTimeout(this.valueTimer);
    this.valueTicket++;
    this.valueKey = undefined;
  }

  private async showValues(target: ValueTarget, ticket: number): Promise<void> {
    let values: string[] = [];
    try {
      const answer = await this.bridge.request("wave/mcp/complete", {
        sessionId: this.sessionId,
        server: target.server,
        ref: target.ref,
        argument: { name: target.argument, value: target.value },
        context: { arguments: target.context },
      });
      values = answer.values;
    } catch {
      // No suggestions: the menu shows nothing new.
    }
    if (ticket !== this.valueTicket) return;
    if (values.length === 0) {
      if (this.trigger?.kind !== "value") return;
      this.trigger = undefined;
      this.items = [];
      if (target.promptArgument) return this.render();
      return this.showList();
    }
    this.trigger = { kind: "value", query: target.value, start: target.start, end: target.end };
    this.items = values.slice(0, MAX_ROWS).map((value) => ({ insert: value, hint: target.argument, detail: "", value: target }));
    this.active = 0;
    this.render();
  }

  private async showList(): Promise<void> {
    const trigger = triggerAt(this.input.value, this.input.selectionStart ?? this.input.value.length);
    if (!trigger) return this.close();
    let list: (query: string) => MenuItem[];
    try {
      if (trigger.kind === "prompt") {
        const prompts = await this.prompts.get();
        list = (query) => promptItems(prompts, query);
      } else {
        const { resources, templates } = await this.resources.get();
        list = (query) => [...resourceItems(resources, query), ...templateItems(templates, query)];
      }
    } catch {
      return this.close();
    }
    // The input may have changed while the list was asked for.
    const now = triggerAt(this.input.value, this.input.selectionStart ?? this.input.value.length);
    if (!now || now.kind !== trigger.kind) return this.close();
    // Values arrived for the mention meanwhile: they stay.
    if (this.trigger?.kind === "value") return;
    const items = list(now.query);
    const same = this.trigger?.kind === now.kind && this.trigger.query === now.query;
    this.trigger = now;
    this.items = items.slice(0, MAX_ROWS);
    if (!same) this.active = initialActive(this.input.value);
    this.active = Math.min(this.active, Math.max(0, this.items.length - 1));
    this.render();
  }

  private onKey(ev: KeyboardEvent): void {
    if (!this.isOpen || ev.isComposing) return;
    const move = (by: number) => {
      this.active = moveActive(this.active, by, this.items.length);
      this.render();
    };
    if (ev.key === "ArrowDown") move(1);
    else if (ev.key === "ArrowUp") move(-1);
    else if (ev.key === "Enter" && !ev.shiftKey && this.active < 0) {
      // No row selected: the key goes on to the page, which runs the input (UI-1).
      this.close();
      return;
    } else if ((ev.key === "Enter" && !ev.shiftKey) || ev.key === "Tab") this.pick(Math.max(0, this.active));
    else if (ev.key === "Escape") this.close();
    else return;
    ev.preventDefault();
    ev.stopImmediatePropagation();
  }

  private pick(index: number): void {
    const item = this.items[index];
    if (!item || !this.trigger) return;
    const next = item.value ? applyValue(this.input.value, item.value, item.insert) : applyItem(this.input.value, this.trigger, item);
    this.input.value = next.text;
    this.input.focus();
    const select = next.select ?? { start: next.cursor, end: next.cursor };
    this.input.setSelectionRange(select.start, select.end);
    this.close();
    // The next argument, a picked prompt's first, or a template's next variable (SRV-3).
    if (!item.value || item.value.promptArgument || next.select) void this.update();
  }

  private close(): void {
    this.dropValues();
    this.trigger = undefined;
    this.items = [];
    this.render();
  }

  private render(): void {
    const open = this.isOpen;
    this.element.hidden = !open;
    this.input.setAttribute("aria-expanded", String(open));
    if (!open) {
      this.input.removeAttribute("aria-activedescendant");
      this.element.replaceChildren();
      return;
    }
    this.element.dataset.kind = this.trigger?.kind;
    const rows = this.items.map((item, i) =>
      h(
        "div",
        {
          class: i === this.active ? "completion-item active" : "completion-item",
          id: `completion-${i}`,
          role: "option",
          "aria-selected": String(i === this.active),
          // mousedown, not click: the input keeps its focus.
          onmousedown: (ev: Event) => {
            ev.preventDefault();
            this.pick(i);
          },
        },
        h("span", { class: "completion-insert" }, item.insert),
        item.hint ? h("span", { class: "completion-hint muted" }, item.hint) : null,
        item.detail ? h("span", { class: "completion-detail muted" }, item.detail) : null,
      ),
    );
    this.element.replaceChildren(...rows);
    if (this.active < 0) this.input.removeAttribute("aria-activedescendant");
    else this.input.setAttribute("aria-activedescendant", `completion-${this.active}`);
    rows[this.active]?.scrollIntoView({ block: "nearest" });
  }
}
