// LONG-5: the host's side of a server's question (wave/session/elicit) that the chat page answers.
import { afterEach, describe, expect, it, vi } from "vitest";
import { PendingAsks, type PageAsk } from "../../src/pageAsks";

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
