// Sidecar requests that the chat page answers (`PAGE_ANSWERED_REQUESTS`, e.g. a server's
// question, `wave/session/elicit`), from the host's side: each waits, by id, for the page's
// `host/answer`. A page that goes away loses what it showed, but not the question: the host
// delivers every request still waiting to the next page that opens (VS Code's chat view drops
// its page whenever it is hidden). A request fails, so that the sidecar declines, when the page
// is gone for good (`failAll`) or after `timeoutMs` without an answer. The host's own requests
// to the page (`host/teardownApps`, APPS-3) go through here too, with `once`: a shorter wait of
// their own, never delivered to a next page, not counted in the badge. No `vscode` import: the
// unit tests drive it.

import type { HostAnswerParams } from "./protocol.generated";

/** A request as the page gets it: a push with an `id`. */
export interface PageAsk {
  id: number;
  method: string;
  params: unknown;
}

/** How one request waits: `timeoutMs` instead of the default; `once`: this page only. */
export interface AskOptions {
  timeoutMs?: number;
  once?: boolean;
}

interface Waiting {
  ask: PageAsk;
  once: boolean;
  resolve(value: unknown): void;
  reject(error: Error): void;
  timer: ReturnType<typeof setTimeout>;
}

export class PendingAsks {
  private readonly waiting = new Map<number, Waiting>();
  private nextId = 1;

  /** `changed` is told how many requests wait after each change (VS Code shows it as a badge). */
  constructor(
    private readonly timeoutMs: number,
    private readonly changed: (waiting: number) => void = () => undefined,
  ) {}

  /** Hands a request to the page through `deliver`; resolves with the page's answer. */
  ask(method: string, params: unknown, deliver: (ask: PageAsk) => void, options: AskOptions = {}): Promise<unknown> {
    const ask: PageAsk = { id: this.nextId++, method, params };
    const once = options.once ?? false;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => this.settle(ask.id, (w) => w.reject(new Error("the chat page did not answer in time"))),
        options.timeoutMs ?? this.timeoutMs,
      );
      this.waiting.set(ask.id, { ask, once, resolve, reject, timer });
      if (!once) this.changed(this.count());
      deliver(ask);
    });
  }

  /** `host/answer`: settles the request it answers (an unknown or settled id is ignored). */
  answer(params: HostAnswerParams): void {
    this.settle(params.id, (w) => {
      if (params.error !== undefined) w.reject(new Error(params.error));
      else w.resolve(params.result ?? null);
    });
  }

  /** The requests still waiting, oldest first: for a page that opened after they were delivered. */
  pending(): PageAsk[] {
    return [...this.waiting.values()].filter((w) => !w.once).map((w) => w.ask);
  }

  /** The requests a next page would get again (the badge's count). */
  private count(): number {
    return this.pending().length;
  }

  /** Fails every request still waiting (the page is gone for good, or the sidecar that asked). */
  failAll(reason: string): void {
    for (const id of [...this.waiting.keys()]) this.settle(id, (w) => w.reject(new Error(reason)));
  }

  private settle(id: number, how: (w: Waiting) => void): void {
    const w = this.waiting.get(id);
    if (!w) return;
    this.waiting.delete(id);
    clearTimeout(w.timer);
    how(w);
    if (!w.once) this.changed(this.count());
  }
}
