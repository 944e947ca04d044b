// A server's question to the user (MCP elicitation, LONG-5, LONG-6), as the chat page shows it:
// the sidecar's `wave/session/elicit` request, delivered by the host, answered by this dialog.
// Form mode builds a form from `requestedSchema` (string with format email/uri/date/date-time
// and length bounds, number/integer with bounds, boolean, single-choice enums with `enumNames`
// or `oneOf` titles, multi-choice arrays, required marks, defaults) and checks it before it is
// sent; URL mode shows the server and the URL's host, and only Accept lets the sidecar open it,
// then waits for `wave/session/elicitationComplete`. One dialog at a time; others queue.

import type {
  JsonValue,
  SessionElicitationCompleteParams,
  SessionElicitParams,
  SessionElicitResult,
} from "../../src/protocol.generated";
import { h } from "./dom";
import type { Lang } from "./i18n";

type Schema = { [key: string]: JsonValue | undefined };
type Values = Record<string, JsonValue>;

/** One property of the form, as it is shown. */
export interface Field {
  name: string;
  label: string;
  description?: string;
  required: boolean;
  kind: "text" | "number" | "integer" | "boolean" | "choice" | "choices";
  /** `type` of the <input> for text fields. */
  inputType: "text" | "email" | "url" | "date";
  format?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  options: { value: JsonValue; label: string }[];
  default?: JsonValue;
}

const texts = {
  en: {
    asks: "{server} asks",
    accept: "Accept",
    decline: "Decline",
    cancel: "Cancel",
    open: "Open {host}",
    urlHint: "It wants to open a page on {host}:",
    waiting: "Waiting for {server} to finish in your browser…",
    close: "Close",
    required: "Required",
    tooShort: "At least {n} characters",
    tooLong: "At most {n} characters",
    notEmail: "Not an email address",
    notUri: "Not a URL",
    notDate: "Not a date (YYYY-MM-DD)",
    notDateTime: "Not a date and time (2025-01-31T09:00:00Z)",
    notNumber: "Not a number",
    notInteger: "Not a whole number",
    below: "At least {n}",
    above: "At most {n}",
    fewItems: "Pick at least {n}",
    manyItems: "Pick at most {n}",
    choose: "Choose…",
  },
  zh: {
    asks: "{server} 请求输入",
    accept: "接受",
    decline: "拒绝",
    cancel: "取消",
    open: "打开 {host}",
    urlHint: "它想打开 {host} 上的页面：",
    waiting: "等待 {server} 在浏览器中完成…",
    close: "关闭",
    required: "必填",
    tooShort: "至少 {n} 个字符",
    tooLong: "最多 {n} 个字符",
    notEmail: "不是有效的邮箱地址",
    notUri: "不是有效的链接",
    notDate: "不是有效的日期（YYYY-MM-DD）",
    notDateTime: "不是有效的日期时间（2025-01-31T09:00:00Z）",
    notNumber: "不是数字",
    notInteger: "不是整数",
    below: "不能小于 {n}",
    above: "不能大于 {n}",
    fewItems: "至少选择 {n} 项",
    manyItems: "最多选择 {n} 项",
    choose: "请选择…",
  },
};
type TextKey = keyof typeof texts.en;

function say(lang: Lang, key: TextKey, vars: Record<string, string | number> = {}): string {
  return texts[lang][key].replace(/\{(\w+)\}/g, (whole, name: string) => (name in vars ? String(vars[name]) : whole));
}

const num = (v: JsonValue | undefined): number | undefined => (typeof v === "number" ? v : undefined);
const str = (v: JsonValue | undefined): string | undefined => (typeof v === "string" ? v : undefined);
const obj = (v: JsonValue | undefined): Schema | undefined =>
  v && typeof v === "object" && !Array.isArray(v) ? (v as Schema) : undefined;
const arr = (v: JsonValue | undefined): JsonValue[] | undefined => (Array.isArray(v) ? v : undefined);

/** The choices of an enum schema: `oneOf`/`anyOf` `{const, title}`, else `enum` with `enumNames`. */
function optionsOf(schema: Schema | undefined): { value: JsonValue; label: string }[] {
  if (!schema) return [];
  const titled = arr(schema.oneOf) ?? arr(schema.anyOf);
  if (titled) {
    return titled.map(obj).filter((o): o is Schema => !!o && o.const !== undefined).map((o) => ({
      value: o.const as JsonValue,
      label: str(o.title) ?? String(o.const),
    }));
  }
  const values = arr(schema.enum) ?? [];
  const names = arr(schema.enumNames) ?? [];
  return values.map((value, i) => ({ value, label: str(names[i]) ?? String(value) }));
}

/** The form's fields, in the schema's order. */
export function fieldsOf(schema: Schema): Field[] {
  const properties = obj(schema.properties) ?? {};
  const required = new Set((arr(schema.required) ?? []).filter((r): r is string => typeof r === "string"));
  return Object.entries(properties).map(([name, raw]) => {
    const p = obj(raw) ?? {};
    const type = str(p.type);
    const format = str(p.format);
    const options = type === "array" ? optionsOf(obj(p.items)) : optionsOf(p);
    let kind: Field["kind"] = "text";
    if (type === "array") kind = "choices";
    else if (options.length > 0) kind = "choice";
    else if (type === "boolean") kind = "boolean";
    else if (type === "integer") kind = "integer";
    else if (type === "number") kind = "number";
    const inputType = format === "email" ? "email" : format === "uri" ? "url" : format === "date" ? "date" : "text";
    return {
      name,
      label: str(p.title) ?? name,
      description: str(p.description),
      required: required.has(name),
      kind,
      inputType,
      format,
      minLength: num(p.minLength),
      maxLength: num(p.maxLength),
      minimum: num(p.minimum),
      maximum: num(p.maximum),
      minItems: num(p.minItems),
      maxItems: num(p.maxItems),
      options,
      default: p.default ?? undefined,
    };
  });
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

function validDate(text: string): boolean {
  if (!DATE.test(text)) return false;
  const d = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().startsWith(text);
}

/**
 * What the user entered (`raw`: text of text/number fields, booleans, picked option indexes)
 * checked against the fields: the content to send, or an error per field.
 */
export function check(
  fields: Field[],
  raw: Record<string, string | boolean | number[]>,
  lang: Lang,
): { content: Values; errors: Record<string, string> } {
  const content: Values = {};
  const errors: Record<string, string> = {};
  for (const f of fields) {
    const v = raw[f.name];
    const fail = (key: TextKey, n?: number) => (errors[f.name] = say(lang, key, n === undefined ? {} : { n }));
    if (f.kind === "boolean") {
      content[f.name] = v === true;
      continue;
    }
    if (f.kind === "choices") {
      const picked = (Array.isArray(v) ? v : []).map((i) => f.options[i]?.value).filter((x) => x !== undefined);
      if (picked.length === 0 && !f.required) continue;
      if (f.minItems !== undefined && picked.length < f.minItems) fail("fewItems", f.minItems);
      else if (f.required && picked.length === 0) fail("required");
      else if (f.maxItems !== undefined && picked.length > f.maxItems) fail("manyItems", f.maxItems);
      else content[f.name] = picked as JsonValue;
      continue;
    }
    if (f.kind === "choice") {
      const index = typeof v === "string" && v !== "" ? Number(v) : -1;
      const option = f.options[index];
      if (!option) {
        if (f.required) fail("required");
        continue;
      }
      content[f.name] = option.value;
      continue;
    }
    const text = typeof v === "string" ? v.trim() : "";
    if (text === "") {
      if (f.required) fail("required");
      continue;
    }
    if (f.kind === "number" || f.kind === "integer") {
      const n = Number(text);
      if (!Number.isFinite(n)) fail("notNumber");
      else if (f.kind === "integer" && !Number.isInteger(n)) fail("notInteger");
      else if (f.minimum !== undefined && n < f.minimum) fail("below", f.minimum);
      else if (f.maximum !== undefined && n > f.maximum) fail("above", f.maximum);
      else content[f.name] = n;
      continue;
    }
    const length = [...text].length;
    if (f.minLength !== undefined && length < f.minLength) fail("tooShort", f.minLength);
    else if (f.maxLength !== undefined && length > f.maxLength) fail("tooLong", f.maxLength);
    else if (f.format === "email" && !EMAIL.test(text)) fail("notEmail");
    else if (f.format === "uri" && !URL.canParse(text)) fail("notUri");
    else if (f.format === "date" && !validDate(text)) fail("notDate");
    else if (f.format === "date-time" && (!DATE_TIME.test(text) || Number.isNaN(Date.parse(text)))) fail("notDateTime");
    else content[f.name] = text;
  }
  return { content, errors };
}

/** The host part of a URL, as the user should see it before opening it. */
export function urlHost(url: string): string {
  try {
    return new URL(url).host || url;
  } catch {
    return url;
  }
}

interface Pending {
  params: SessionElicitParams;
  resolve(result: SessionElicitResult): void;
}

/** The dialog: one question at a time, in arrival order. */
export class ElicitDialog {
  private readonly queue: Pending[] = [];
  private current?: Pending;
  /** A URL elicitation that was accepted and waits for its completion. */
  private waiting?: SessionElicitParams;

  constructor(
    private readonly root: HTMLElement,
    private readonly lang: Lang,
  ) {
    this.render();
  }

  /** Asks `params`; resolves with the user's answer. */
  ask(params: SessionElicitParams): Promise<SessionElicitResult> {
    return new Promise((resolve) => {
      this.queue.push({ params, resolve });
      if (!this.current) this.next();
    });
  }

  /** `wave/session/elicitationComplete`: the waiting state of that URL closes. */
  completed(p: SessionElicitationCompleteParams): void {
    if (this.waiting && this.waiting.server === p.server && (this.waiting.elicitationId ?? "") === p.elicitationId) {
      this.waiting = undefined;
      this.render();
    }
  }

  /** How many questions wait behind the one shown (for tests). */
  get queued(): number {
    return this.queue.length;
  }

  private next(): void {
    this.current = this.queue.shift();
    this.render();
  }

  private finish(result: SessionElicitResult): void {
    const done = this.current;
    if (!done) return;
    if (done.params.mode === "url" && result.action === "accept") this.waiting = done.params;
    done.resolve(result);
    this.next();
  }

  private render(): void {
    const L = (k: TextKey, v?: Record<string, string | number>) => say(this.lang, k, v);
    const shown = this.current;
    if (!shown) {
      if (this.waiting) {
        const w = this.waiting;
        this.root.hidden = false;
        this.root.replaceChildren(
          h(
            "div",
            { class: "elicit elicit-waiting", id: "elicit-waiting", "data-server": w.server },
            h("div", { class: "muted" }, L("waiting", { server: w.server })),
            h("button", { id: "elicit-close", type: "button", onclick: () => ((this.waiting = undefined), this.render()) }, L("close")),
          ),
        );
        return;
      }
      this.root.hidden = true;
      this.root.replaceChildren();
      return;
    }
    this.root.hidden = false;
    const p = shown.params;
    const head = [
      h("div", { class: "elicit-server", id: "elicit-server" }, L("asks", { server: p.server })),
      h("div", { class: "elicit-message", id: "elicit-message" }, p.message),
    ];
    const decline = h("button", { id: "elicit-decline", type: "button", onclick: () => this.finish({ action: "decline" }) }, L("decline"));
    const cancel = h("button", { id: "elicit-cancel", type: "button", onclick: () => this.finish({ action: "cancel" }) }, L("cancel"));
    if (p.mode === "url") {
      const host = urlHost(p.url ?? "");
      this.root.replaceChildren(
        h(
          "div",
          { class: "elicit elicit-url", id: "elicit", "data-mode": "url", role: "dialog" },
          ...head,
          h("div", {}, L("urlHint", { host })),
          h("div", { class: "elicit-host", id: "elicit-host" }, host),
          h("code", { class: "elicit-full-url", id: "elicit-url" }, p.url ?? ""),
          h(
            "div",
            { class: "elicit-actions" },
            h("button", { class: "primary", id: "elicit-accept", type: "button", onclick: () => this.finish({ action: "accept" }) }, L("open", { host })),
            decline,
            cancel,
          ),
        ),
      );
      return;
    }
    const fields = fieldsOf((p.requestedSchema ?? {}) as Schema);
    const inputs = new Map<string, () => string | boolean | number[]>();
    const errorEls = new Map<string, HTMLElement>();
    const rows = fields.map((f) => {
      const id = `elicit-field-${f.name}`;
      let control: HTMLElement;
      if (f.kind === "boolean") {
        const box = h("input", { type: "checkbox", id, name: f.name, checked: f.default === true }) as HTMLInputElement;
        inputs.set(f.name, () => box.checked);
        control = box;
      } else if (f.kind === "choice") {
        const select = h(
          "select",
          { id, name: f.name },
          h("option", { value: "" }, L("choose")),
          f.options.map((o, i) => h("option", { value: String(i), selected: o.value === f.default }, o.label)),
        ) as HTMLSelectElement;
        inputs.set(f.name, () => select.value);
        control = select;
      } else if (f.kind === "choices") {
        const defaults = Array.isArray(f.default) ? f.default : [];
        const boxes = f.options.map((o, i) =>
          h("input", { type: "checkbox", id: `${id}-${i}`, value: String(i), checked: defaults.includes(o.value) }) as HTMLInputElement,
        );
        inputs.set(f.name, () => boxes.filter((b) => b.checked).map((b) => Number(b.value)));
        control = h(
          "div",
          { class: "elicit-choices", id },
          boxes.map((b, i) => h("label", { class: "elicit-choice" }, b, " ", f.options[i].label)),
        );
      } else {
        const numeric = f.kind === "number" || f.kind === "integer";
        const input = h("input", {
          id,
          name: f.name,
          type: numeric ? "number" : f.inputType,
          step: f.kind === "integer" ? 1 : numeric ? "any" : undefined,
          min: f.minimum,
          max: f.maximum,
          placeholder: f.format === "date-time" ? "2025-01-31T09:00:00Z" : undefined,
          value: f.default === undefined || f.default === null ? undefined : String(f.default),
        }) as HTMLInputElement;
        inputs.set(f.name, () => input.value);
        control = input;
      }
      const error = h("div", { class: "elicit-error error-text", id: `elicit-error-${f.name}` });
      errorEls.set(f.name, error);
      return h(
        "div",
        { class: "elicit-field", "data-field": f.name, "data-kind": f.kind },
        h(
          "label",
          { for: id, class: "elicit-label" },
          f.label,
          f.required ? h("span", { class: "elicit-required", title: L("required") }, " *") : null,
        ),
        f.description ? h("div", { class: "elicit-description muted" }, f.description) : null,
        control,
        error,
      );
    });
    const accept = () => {
      const raw: Record<string, string | boolean | number[]> = {};
      for (const [name, read] of inputs) raw[name] = read();
      const { content, errors } = check(fields, raw, this.lang);
      for (const [name, el] of errorEls) el.textContent = errors[name] ?? "";
      if (Object.keys(errors).length > 0) {
        this.root.querySelector<HTMLElement>(`#elicit-field-${Object.keys(errors)[0]}`)?.focus();
        return;
      }
      this.finish({ action: "accept", content });
    };
    this.root.replaceChildren(
      h(
        "form",
        {
          class: "elicit elicit-form",
          id: "elicit",
          "data-mode": "form",
          role: "dialog",
          novalidate: true,
          onsubmit: (ev: Event) => {
            ev.preventDefault();
            accept();
          },
        },
        ...head,
        rows,
        h(
          "div",
          { class: "elicit-actions" },
          h("button", { class: "primary", id: "elicit-accept", type: "submit" }, L("accept")),
          decline,
          cancel,
        ),
      ),
    );
  }
}
