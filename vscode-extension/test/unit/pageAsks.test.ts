// LONG-5: the host's side of a server's question (wave/session/elicit) that the chat page answers.
import { afterEach, describe, expect, it, vi } from "vitest";
import { PendingAsks, type PageAsk } from "../../src/pageAsks";
import { checkPageRequest, MAX_PAGE_MESSAGE_CHARS } from "../../src/pageMessages";

const form = { sessionId: "default", server: "py", mode: "form", message: "Tell me about you" };

describe("questions the chat page answers (host side)", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("LONG-5: a question waits for its answer by id; a page that opened later gets it again with that id", async () => {
    const counts: number[] = [];
    const asks = new PendingAsks(60_000, (n) => counts.push(n));
    const delivered: PageAsk[] = [];
    const first = asks.ask("wave/session/elicit", form, (a) => delivered.push(a));
    const second = asks.ask("wave/session/elicit", { ...form, message: "Sure?" }, (a) => delivered.push(a));
    expect(delivered.map((a) => [a.id, a.method])).toEqual([
      [1, "wave/session/elicit"],
      [2, "wave/session/elicit"],
    ]);
    // The page is gone (a hidden view) and a new one opens: both are still waiting, in order.
    expect(asks.pending()).toEqual(delivered);
    asks.answer({ id: 2, result: { action: "accept", content: { ok: true } } });
    asks.answer({ id: 2, result: { action: "decline" } }); // settled already: ignored
    asks.answer({ id: 99, result: { action: "decline" } }); // unknown: ignored
    await expect(second).resolves.toEqual({ action: "accept", content: { ok: true } });
    expect(asks.pending().map((a) => a.id)).toEqual([1]);
    asks.answer({ id: 1, error: "the user closed the dialog" });
    await expect(first).rejects.toThrow("the user closed the dialog");
    expect(asks.pending()).toEqual([]);
    expect(counts).toEqual([1, 2, 1, 0]);
  });

  it("LONG-5: a page gone for good, or no answer in time, fails the question (the sidecar declines)", async () => {
    vi.useFakeTimers();
    const asks = new PendingAsks(30 * 60_000);
    const gone = [asks.ask("wave/session/elicit", form, () => undefined), asks.ask("wave/session/elicit", form, () => undefined)];
    asks.failAll("the chat page closed");
    for (const p of gone) await expect(p).rejects.toThrow("the chat page closed");
    expect(asks.pending()).toEqual([]);

    const unanswered = asks.ask("wave/session/elicit", form, () => undefined);
    const outcome = unanswered.catch((e: Error) => e.message);
    vi.advanceTimersByTime(30 * 60_000 - 1);
    expect(asks.pending().length).toBe(1);
    vi.advanceTimersByTime(1);
    await expect(outcome).resolves.toBe("the chat page did not answer in time");
    expect(asks.pending()).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe("APPS-3: the host's host/teardownApps (host side)", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("APPS-3: host/teardownApps is answered by id with the page's counts; it is for this page only (never delivered again) and not counted in the badge", async () => {
    const counts: number[] = [];
    const asks = new PendingAsks(30 * 60_000, (n) => counts.push(n));
    const delivered: PageAsk[] = [];
    const question = asks.ask("wave/session/elicit", form, (a) => delivered.push(a));
    const teardown = asks.ask("host/teardownApps", { reason: "Wave: Restart sidecar" }, (a) => delivered.push(a), { timeoutMs: 3000, once: true });
    expect(delivered.map((a) => [a.id, a.method])).toEqual([
      [1, "wave/session/elicit"],
      [2, "host/teardownApps"],
    ]);
    // A page that opens next gets the question again, never the teardown (it would stop its apps).
    expect(asks.pending().map((a) => a.method)).toEqual(["wave/session/elicit"]);
    asks.answer({ id: 2, result: { total: 2, answered: 1 } });
    await expect(teardown).resolves.toEqual({ total: 2, answered: 1 });
    asks.failAll("done");
    await expect(question).rejects.toThrow("done");
    expect(counts).toEqual([1, 0]);
  });

  it("APPS-3: a page that does not answer host/teardownApps holds the host up only for its own short wait", async () => {
    vi.useFakeTimers();
    const asks = new PendingAsks(30 * 60_000);
    const outcome = asks.ask("host/teardownApps", { reason: "r" }, () => undefined, { timeoutMs: 3000, once: true }).catch((e: Error) => e.message);
    vi.advanceTimersByTime(2999);
    vi.advanceTimersByTime(1);
    await expect(outcome).resolves.toBe("the chat page did not answer in time");
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe("TRUST-8: what the VS Code host takes from its page", () => {
  it("well-formed requests of known methods pass, with {} for absent params", () => {
    expect(checkPageRequest({ kind: "request", id: 1, method: "wave/mcp/approve", params: { name: "db" } })).toEqual({
      ok: true,
      id: 1,
      method: "wave/mcp/approve",
      params: { name: "db" },
    });
    expect(checkPageRequest({ kind: "request", id: 2, method: "host/answer" })).toEqual({ ok: true, id: 2, method: "host/answer", params: {} });
  });

  it("anything else is refused, answered with an error when it has an id", () => {
    expect(checkPageRequest(null)).toMatchObject({ ok: false });
    expect(checkPageRequest("wave/mcp/approve")).toMatchObject({ ok: false });
    expect(checkPageRequest([1])).toMatchObject({ ok: false });
    expect(checkPageRequest({ kind: "response", id: 1, result: {} })).not.toHaveProperty("id");
    for (const id of ["1", 1.5, -1, undefined]) {
      const refused = checkPageRequest({ kind: "request", id, method: "wave/mcp/servers" });
      expect(refused.ok).toBe(false);
      expect(refused).not.toHaveProperty("id");
    }
    // Sidecar methods that are not forwarded (the sidecar's own questions, session lifecycle).
    for (const method of ["wave/session/approveServers", "wave/session/confirmTool", "wave/session/destroy", "wave/workspace/trust", "shutdown", "exit"]) {
      expect(checkPageRequest({ kind: "request", id: 3, method, params: {} })).toEqual({ ok: false, id: 3, error: `unknown request ${method}` });
    }
    expect(checkPageRequest({ kind: "request", id: 4, method: "host/../x", params: {} })).toMatchObject({ ok: false, id: 4 });
    expect(checkPageRequest({ kind: "request", id: 5, method: 7, params: {} })).toMatchObject({ ok: false, id: 5 });
    expect(checkPageRequest({ kind: "request", id: 6, method: "wave/mcp/approve", params: ["db"] })).toEqual({
      ok: false,
      id: 6,
      error: "the params of wave/mcp/approve must be an object",
    });
    expect(checkPageRequest({ kind: "request", id: 7, method: "wave/mcp/approve", params: "db" })).toMatchObject({ ok: false, id: 7 });
    const big = { kind: "request", id: 8, method: "wave/session/send", params: { sessionId: "default", text: "x".repeat(MAX_PAGE_MESSAGE_CHARS) } };
    expect(checkPageRequest(big)).toEqual({ ok: false, id: 8, error: `the request is larger than ${MAX_PAGE_MESSAGE_CHARS} characters` });
  });
});
