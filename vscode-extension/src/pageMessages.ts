// TRUST-8: what the VS Code host accepts from its webview page before it acts on it. A page
// message is a request `{kind: "request", id, method, params}`: an integer id, a method the host
// knows (a forwarded `wave/*` request or a `host/*` request), object params, and at most
// MAX_PAGE_MESSAGE_CHARS of JSON. Anything else is answered with an error (when it has an id to
// answer) and never reaches the sidecar. Pure: no `vscode` import, so the unit tests drive it.

import { FORWARDED_REQUESTS } from "./protocol.generated";

/** The largest page request, as JSON text (a chat message or a form answer is far smaller). */
export const MAX_PAGE_MESSAGE_CHARS = 1_000_000;

const FORWARDED: ReadonlySet<string> = new Set<string>(FORWARDED_REQUESTS);

export type PageRequestCheck =
  | { ok: true; id: number; method: string; params: Record<string, unknown> }
  | { ok: false; id?: number; error: string };

/** Checks one message of the page; `ok` ones are safe to hand to the request handler. */
export function checkPageRequest(raw: unknown): PageRequestCheck {
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) return { ok: false, error: "a page message must be an object" };
  const msg = raw as { kind?: unknown; id?: unknown; method?: unknown; params?: unknown };
  if (msg.kind !== "request") return { ok: false, error: "not a request" };
  if (typeof msg.id !== "number" || !Number.isSafeInteger(msg.id) || msg.id < 0) return { ok: false, error: "a request needs an integer id" };
  const id = msg.id;
  let size: number;
  try {
    size = JSON.stringify(raw).length;
  } catch {
    return { ok: false, id, error: "the request is not JSON" };
  }
  if (size > MAX_PAGE_MESSAGE_CHARS) return { ok: false, id, error: `the request is larger than ${MAX_PAGE_MESSAGE_CHARS} characters` };
  if (typeof msg.method !== "string" || !(FORWARDED.has(msg.method) || /^host\/[A-Za-z]+$/.test(msg.method)))
    return { ok: false, id, error: `unknown request ${typeof msg.method === "string" ? msg.method.slice(0, 100) : ""}`.trimEnd() };
  const params = msg.params ?? {};
  if (typeof params !== "object" || params === null || Array.isArray(params))
    return { ok: false, id, error: `the params of ${msg.method} must be an object` };
  return { ok: true, id, method: msg.method, params: params as Record<string, unknown> };
}
