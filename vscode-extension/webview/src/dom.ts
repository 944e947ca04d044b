// A minimal element builder. No innerHTML anywhere: every text from the sidecar (names, commands,
// errors) goes in as a text node.

type Attrs = Record<string, string | number | boolean | undefined | ((ev: Event) => void)>;
type Child = Node | string | null | undefined | false;

export function h(tag: string, attrs: Attrs = {}, ...children: (Child | Child[])[]): HTMLElement {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (typeof value === "function") el.addEventListener(key.replace(/^on/, "").toLowerCase(), value);
    else if (key === "class") el.className = String(value);
    else if (value === true) el.setAttribute(key, "");
    else el.setAttribute(key, String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return el;
}

/**
 * Makes `parent`'s children exactly `items`, in order, without detaching an item that is already
 * there in the right order: an element kept across renders (an MCP app's iframe) stays attached,
 * so it never reloads. New items are inserted, the others removed.
 */
export function reconcile(parent: Element, items: readonly Node[]): void {
  const keep = new Set(items);
  for (const child of [...parent.childNodes]) if (!keep.has(child)) child.remove();
  let cursor = parent.firstChild;
  for (const item of items) {
    if (item === cursor) {
      cursor = cursor.nextSibling;
      continue;
    }
    parent.insertBefore(item, cursor);
  }
}
