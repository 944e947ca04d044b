// USE-4: the assistant's markdown, parsed by markdown-it (CommonMark) with raw HTML off, built
// into DOM elements from its tokens (no innerHTML: every text of the model goes in as a text
// node). Only the tags below are built; anything else (raw HTML, should it ever be parsed) is
// text. Links are never navigable elements of the page: an `<a>` without `href` whose click asks
// the host (`host/openExternal`), which opens it only after the user confirms. Images are off:
// a model's answer loads nothing remote.

import MarkdownIt, { type Token } from "markdown-it";

/** The link schemes a chat link may have; any other link stays text. */
export function safeLinkUrl(url: string): string | undefined {
  const trimmed = url.trim();
  if (!/^(https?:\/\/|mailto:)/i.test(trimmed)) return undefined;
  try {
    const parsed = new URL(trimmed);
    if (!["http:", "https:", "mailto:"].includes(parsed.protocol)) return undefined;
    return parsed.href;
  } catch {
    return undefined;
  }
}

const md = new MarkdownIt("default", { html: false, linkify: true, typographer: false });
md.disable("image");
// A link markdown-it would otherwise make of a `javascript:` (or relative, or file:) URL stays text.
md.validateLink = (url: string) => safeLinkUrl(url) !== undefined;

/** One built node: a text, or an element of an allowed tag with its attributes and children. */
export type MdNode = string | MdElement;
export interface MdElement {
  tag: string;
  attrs: Record<string, string>;
  children: MdNode[];
}

/** Tags a token may become (markdown-it's own tags for the enabled rules). */
const ALLOWED_TAGS = new Set([
  "p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "blockquote", "hr", "br",
  "table", "thead", "tbody", "tr", "th", "td", "em", "strong", "s", "code", "pre", "a",
]);

/** The markdown of `text` as a tree of allowed elements and texts (pure: no DOM). */
export function markdownTree(text: string): MdNode[] {
  const root: MdElement = { tag: "", attrs: {}, children: [] };
  build(md.parse(text, {}), root);
  return root.children;
}

function build(tokens: Token[], root: MdElement): void {
  const stack: MdElement[] = [root];
  const top = () => stack[stack.length - 1];
  for (const token of tokens) {
    if (token.type === "inline") {
      build(token.children ?? [], top());
      continue;
    }
    if (token.type === "text") top().children.push(token.content);
    else if (token.type === "softbreak") top().children.push("\n");
    else if (token.type === "code_inline") top().children.push({ tag: "code", attrs: {}, children: [token.content] });
    else if (token.type === "fence" || token.type === "code_block") top().children.push(codeBlock(token));
    else if (token.nesting === 1) {
      // Tight lists' paragraphs are hidden: their texts go straight into the item.
      const el: MdElement = { tag: token.hidden ? "" : token.tag, attrs: attrsOf(token), children: [] };
      if (!token.hidden && !ALLOWED_TAGS.has(token.tag)) el.tag = "span";
      top().children.push(el);
      stack.push(el);
    } else if (token.nesting === -1) {
      if (stack.length > 1) stack.pop();
    } else if (ALLOWED_TAGS.has(token.tag) && (token.tag === "hr" || token.tag === "br")) {
      top().children.push({ tag: token.tag, attrs: {}, children: [] });
    } else if (token.content) top().children.push(token.content);
  }
  flattenHidden(root);
}

/** Elements without a tag (hidden paragraphs) give their children to their parent. */
function flattenHidden(el: MdElement): void {
  const out: MdNode[] = [];
  for (const child of el.children) {
    if (typeof child === "string") out.push(child);
    else {
      flattenHidden(child);
      if (child.tag === "") out.push(...child.children);
      else out.push(child);
    }
  }
  el.children = out;
}

function attrsOf(token: Token): Record<string, string> {
  if (token.type === "link_open") {
    const url = safeLinkUrl(String(token.attrGet("href") ?? ""));
    return url ? { "data-href": url, title: url } : {};
  }
  if (token.type === "ordered_list_open") {
    const start = String(token.attrGet("start") ?? "");
    return /^\d+$/.test(start) ? { start } : {};
  }
  return {};
}

function codeBlock(token: Token): MdElement {
  const lang = (token.info ?? "").trim().split(/\s+/)[0] ?? "";
  const code: MdElement = { tag: "code", attrs: lang ? { "data-lang": lang } : {}, children: [token.content] };
  return { tag: "pre", attrs: lang ? { "data-lang": lang } : {}, children: [code] };
}

export interface RenderOptions {
  /** The label of a code block's copy button, and what it says once copied. */
  copyLabel: string;
  copiedLabel: string;
}

/**
 * The markdown of `text` as DOM nodes. Links are `<a class="md-link" data-href role="link">`
 * without `href`, code blocks a `<div class="md-code">` with a copy button: the chat page handles
 * their clicks (see `linkClicked` / `copyClicked`).
 */
export function renderMarkdown(text: string, options: RenderOptions): Node[] {
  return markdownTree(text).map((n) => toDom(n, options));
}

function toDom(node: MdNode, options: RenderOptions): Node {
  if (typeof node === "string") return document.createTextNode(node);
  const el = document.createElement(node.tag);
  for (const [k, v] of Object.entries(node.attrs)) el.setAttribute(k, v);
  for (const child of node.children) el.append(toDom(child, options));
  if (node.tag === "a") {
    if (!node.attrs["data-href"]) return document.createTextNode(el.textContent ?? "");
    el.className = "md-link";
    el.setAttribute("role", "link");
    el.tabIndex = 0;
  }
  if (node.tag === "pre") {
    const button = document.createElement("button");
    button.className = "md-copy secondary";
    button.type = "button";
    button.textContent = options.copyLabel;
    button.dataset.copied = options.copiedLabel;
    button.dataset.label = options.copyLabel;
    const bar = document.createElement("div");
    bar.className = "md-code-bar";
    const lang = document.createElement("span");
    lang.className = "md-code-lang muted";
    lang.textContent = node.attrs["data-lang"] ?? "";
    bar.append(lang, button);
    const wrap = document.createElement("div");
    wrap.className = "md-code";
    wrap.append(bar, el);
    return wrap;
  }
  return el;
}

/** The link a click (or Enter) in rendered markdown is on, if any. */
export function linkClicked(ev: Event): string | undefined {
  const target = ev.target as Element | null;
  const link = target?.closest?.("a.md-link");
  const url = link?.getAttribute("data-href");
  return url ? safeLinkUrl(url) : undefined;
}

/** The code a click on a copy button copies, and the button; undefined for other clicks. */
export function copyClicked(ev: Event): { code: string; button: HTMLButtonElement } | undefined {
  const target = ev.target as Element | null;
  const button = target?.closest?.("button.md-copy") as HTMLButtonElement | null | undefined;
  const code = button?.closest(".md-code")?.querySelector("pre code")?.textContent;
  return button && code !== undefined && code !== null ? { code, button } : undefined;
}

/** Copies `text` to the clipboard: the Clipboard API, else a selected textarea and `copy`. */
export async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.className = "md-copy-buffer";
    document.body.append(area);
    area.select();
    try {
      return document.execCommand("copy");
    } finally {
      area.remove();
    }
  }
}
