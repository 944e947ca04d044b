// The VS Code side of sign-in without VS Code (AUTH-2, AUTH-9): pending logins and their Cancel,
// and the answer to the sidecar's `wave/mcp/openUrl`.

import { describe, expect, it } from "vitest";
import { answerOpenUrl, openUrlTexts, PendingLogins, type Cancellable } from "../../src/signIn";

class FakeSource implements Cancellable<{ cancelled: boolean }> {
  readonly token = { cancelled: false };
  disposed = false;
  cancel() {
    this.token.cancelled = true;
  }
  dispose() {
    this.disposed = true;
  }
}

const deferred = <T>() => {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
};

describe("pending sign-ins (AUTH-9)", () => {
  it("Cancel cancels the running login's token; the token source is disposed when it ends", async () => {
    const sources: FakeSource[] = [];
    const logins = new PendingLogins(() => {
      const s = new FakeSource();
      sources.push(s);
      return s;
    });
    const reply = deferred<string>();
    const running = logins.run("default", "remote", () => reply.promise);
    expect(logins.size).toBe(1);
    expect(logins.cancel("default", "other")).toBe(false);
    expect(logins.cancel(undefined, "remote")).toBe(true); // no session id = the default session
    expect(sources[0].token.cancelled).toBe(true);
    expect(logins.cancel("default", "remote")).toBe(false);
    reply.reject(Object.assign(new Error("Canceled"), { code: -32800 }));
    await expect(running).rejects.toMatchObject({ code: -32800 });
    expect(sources[0].disposed).toBe(true);
    expect(logins.size).toBe(0);
  });

  it("a newer login of the same server takes the slot; the old one ending does not free it", async () => {
    const sources: FakeSource[] = [];
    const logins = new PendingLogins(() => {
      const s = new FakeSource();
      sources.push(s);
      return s;
    });
    const first = deferred<string>();
    const second = deferred<string>();
    const a = logins.run("default", "remote", () => first.promise);
    const b = logins.run("default", "remote", () => second.promise);
    first.reject(new Error("signInCancelled"));
    await a.catch(() => undefined);
    expect(logins.size).toBe(1);
    logins.cancel("default", "remote");
    expect(sources[1].token.cancelled).toBe(true);
    expect(sources[0].token.cancelled).toBe(false);
    second.resolve("ok");
    await expect(b).resolves.toBe("ok");
    logins.cancelAll();
  });
});

describe("wave/mcp/openUrl (AUTH-2)", () => {
  const params = { sessionId: "default", name: "linear", url: "http://localhost:9/authorize?state=x&redirect_uri=http%3A%2F%2F127.0.0.1%3A5%2Fcallback" };

  it("shows the URL with Copy URL, opens it with openExternal and answers with its result", async () => {
    const shown: unknown[] = [];
    const opened: string[] = [];
    const copied: string[] = [];
    const pick = deferred<string | undefined>();
    const result = await answerOpenUrl(params, {
      zh: false,
      openExternal: async (url) => {
        opened.push(url);
        return true;
      },
      showInformation: (message, ...actions) => {
        shown.push([message, actions]);
        return pick.promise;
      },
      copy: async (text) => {
        copied.push(text);
      },
    });
    // The answer does not wait for the notification to be dismissed.
    expect(result).toEqual({ opened: true });
    expect(opened).toEqual([params.url]);
    expect(shown).toEqual([[`Wave: sign in to the MCP server "linear" in your browser: ${params.url}`, ["Copy URL", "Open URL"]]]);
    pick.resolve("Copy URL");
    await new Promise((r) => setTimeout(r, 0));
    expect(copied).toEqual([params.url]);
  });

  it("opened:false when openExternal declines or throws, or the URL is not a web page", async () => {
    const base = { zh: false, showInformation: async () => undefined, copy: async () => undefined };
    expect(await answerOpenUrl(params, { ...base, openExternal: async () => false })).toEqual({ opened: false });
    expect(
      await answerOpenUrl(params, {
        ...base,
        openExternal: async () => {
          throw new Error("no browser");
        },
      }),
    ).toEqual({ opened: false });
    let called = false;
    const r = await answerOpenUrl({ ...params, url: "file:///etc/passwd" }, {
      ...base,
      openExternal: async () => (called = true),
    });
    expect(r).toEqual({ opened: false });
    expect(called).toBe(false);
  });

  it("Chinese texts", () => {
    expect(openUrlTexts(true, "linear", "http://x").copy).toBe("复制链接");
    expect(openUrlTexts(true, "linear", "http://x").message).toContain("http://x");
  });
});

describe("wave/mcp/openUrl for an accepted elicitation (LONG-6)", () => {
  it("names the server that asked, not a sign-in", () => {
    const en = openUrlTexts(false, "bank", "https://pay.example.com/x", "elicitation");
    expect(en.message).toBe('Wave: the page the MCP server "bank" asked for opens in your browser: https://pay.example.com/x');
    expect(en.message).not.toContain("sign in");
    expect(openUrlTexts(true, "bank", "https://pay.example.com/x", "elicitation").message).toContain("“bank”请求的页面");
    expect(openUrlTexts(false, "linear", "http://x", "signIn").message).toContain("sign in");
  });
});
