// USE-4: the assistant's markdown in the shared chat page, headless Chromium against the REAL
// sidecar (`wave-mcp lsp`) and a fake model, through the JCEF adapter as the JetBrains plugin
// drives it: rendered elements, raw HTML and `javascript:` links that stay text, a code block's
// Copy, a link that opens only through the host (`host/openExternal`), markdown while the answer
// streams, and tool results that stay plain text.

import assert from "node:assert/strict";
import * as path from "node:path";
import { describe, test } from "node:test";
import {
  closeAll,
  makeSandbox,
  openChatPage,
  outputDir,
  scripted,
  startFakeModel,
  startSidecar,
  testServerBin,
  until,
  useBrowser,
  userPermissions,
  writeProject,
} from "./support.mjs";

const ui = useBrowser();

const CODE = 'fn main() {\n    println!("hello <b>&amp;</b>");\n}\n';
/** An answer with every element USE-4 names, raw HTML, and links of each kind. */
const ANSWER = [
  "## Build steps",
  "",
  "Run it with **cargo** and *care*; the binary is `target/debug/demo`.",
  "",
  "- first item",
  "- second item",
  "",
  "1. one",
  "2. two",
  "",
  "```rust",
  CODE + "```",
  "",
  'Raw: <img src=x onerror="window.__pwned = 1"> and <script>window.__pwned2 = 1</script>',
  "",
  "<img src=block-x onerror=\"window.__pwned3 = 1\">",
  "",
  "Docs: [the guide](https://example.com/guide?a=1&b=2), bad: [click me](javascript:window.__pwned4=1)",
].join("\n");

/** The chat page on the real sidecar with a model that runs `steps`; `close()` ends everything. */
async function openChat(steps, { servers, grantClipboard = false } = {}) {
  const sandbox = makeSandbox({ empty: true });
  if (servers) {
    writeProject(sandbox, servers(sandbox));
    userPermissions(sandbox.home, { defaultMode: "allow" });
  }
  const model = await startFakeModel(scripted(steps));
  const sidecar = await startSidecar(sandbox, { env: { WAVE_BASE_URL: model.baseUrl, WAVE_MODEL: "fake" } });
  const chat = await openChatPage(ui, sidecar);
  if (grantClipboard) await chat.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: new URL(ui.web.url).origin });
  // Every request the page makes: raw HTML that became an element would load `x`.
  const requests = [];
  chat.page.on("request", (r) => requests.push(r.url()));
  const pages = [];
  chat.context.on("page", (p) => pages.push(p));
  return { ...chat, requests, pages, close: () => closeAll(chat.context, sidecar, model, sandbox) };
}

async function ask(page, text) {
  await page.locator("#chat-input").fill(text);
  await page.locator("#chat-send").click();
}

describe("USE-4: the assistant's markdown in the chat page (JCEF bridge, real sidecar)", () => {
  test("USE-4: headings, lists, emphasis, inline and fenced code render; <img onerror> and <script> stay text with no side effect; a javascript: link is no link", async () => {
    const chat = await openChat([{ say: ANSWER }]);
    const { page, errors, relay } = chat;
    try {
      await ask(page, "how do I build it?");
      const answer = page.locator(".msg-assistant:not(.streaming) .msg-text.md");
      await answer.waitFor({ timeout: 30_000 });
      assert.equal(await answer.locator("h2").textContent(), "Build steps");
      assert.deepEqual(await answer.locator("ul > li").allTextContents(), ["first item", "second item"]);
      assert.deepEqual(await answer.locator("ol > li").allTextContents(), ["one", "two"]);
      assert.equal(await answer.locator("strong").textContent(), "cargo");
      assert.equal(await answer.locator("em").textContent(), "care");
      assert.equal(await answer.locator("p > code").textContent(), "target/debug/demo");
      assert.equal(await answer.locator(".md-code pre code").textContent(), CODE);
      assert.equal(await answer.locator(".md-code .md-code-lang").textContent(), "rust");
      // Raw HTML: its text is shown as typed, and nothing of it is an element.
      const shown = await answer.textContent();
      assert.ok(shown.includes('<img src=x onerror="window.__pwned = 1">'), shown);
      assert.ok(shown.includes("<script>window.__pwned2 = 1</script>"), shown);
      assert.ok(shown.includes('<img src=block-x onerror="window.__pwned3 = 1">'), shown);
      assert.equal(await page.locator("#chat-log img, #chat-log script, #chat-log iframe").count(), 0, "no img, script or iframe element");
      assert.equal(await page.locator("script").count(), 1, "the page's own script only");
      // `javascript:` is no link: its text stays as written, and clicking it does nothing.
      assert.ok(shown.includes("[click me](javascript:window.__pwned4=1)"), shown);
      assert.equal(await answer.locator("a").count(), 1, "one link: the https one");
      assert.equal(await answer.locator("a", { hasText: "click me" }).count(), 0);
      await answer.getByText("click me", { exact: false }).click();
      const pwned = await page.evaluate(() => [window.__pwned, window.__pwned2, window.__pwned3, window.__pwned4]);
      assert.deepEqual(pwned, [undefined, undefined, undefined, undefined], "no script of the answer ran");
      assert.deepEqual(chat.requests.filter((u) => /\/(block-)?x$/.test(u)), [], "no image of the answer was loaded");
      assert.equal(relay.hostLog.filter((e) => e.method === "host/openExternal").length, 0, "no link was asked for");
      await page.screenshot({ path: path.join(outputDir, "60-chat-markdown.png"), fullPage: true });
      assert.deepEqual(errors, [], "no script or CSP errors in the page");
    } finally {
      await chat.close();
    }
  });

  // The confirm itself is the host's: VS Code's modal (test/unit/markdown.test.ts, and Cancel opening
  // nothing in tests/e2e/markdown.e2e.test.mjs), JetBrains' OK/Cancel (PageBridgeTest). Here the
  // relay plays the plugin: the page only asks, it never opens or navigates on its own.
  test("USE-4: a link click (or Enter) only asks the host with host/openExternal, which opens it after the user confirms; the page itself never navigates or opens a window", async () => {
    const chat = await openChat([{ say: ANSWER }]);
    const { page, errors, relay } = chat;
    try {
      await ask(page, "links?");
      const link = page.locator(".msg-assistant:not(.streaming) a.md-link");
      await link.waitFor({ timeout: 30_000 });
      assert.equal(await link.textContent(), "the guide");
      assert.equal(await link.getAttribute("href"), null, "no href: the page itself cannot navigate");
      const before = page.url();
      await link.click();
      await until(() => relay.hostLog.some((e) => e.method === "host/openExternal"), "host/openExternal");
      // The keyboard too: Enter on the focused link.
      await link.focus();
      await page.keyboard.press("Enter");
      await until(() => relay.hostLog.filter((e) => e.method === "host/openExternal").length === 2, "host/openExternal by Enter");
      assert.deepEqual(
        relay.hostLog.filter((e) => e.method === "host/openExternal").map((e) => e.params),
        [{ url: "https://example.com/guide?a=1&b=2" }, { url: "https://example.com/guide?a=1&b=2" }],
      );
      assert.equal(page.url(), before, "the page did not navigate");
      assert.equal(chat.pages.length, 0, "no window opened");
      assert.deepEqual(chat.requests.filter((u) => u.includes("example.com")), [], "the page loaded nothing of the link");
      assert.deepEqual(errors, []);
    } finally {
      await chat.close();
    }
  });

  test("USE-4: a code block's Copy puts its code on the clipboard", async () => {
    const chat = await openChat([{ say: ANSWER }], { grantClipboard: true });
    const { page, errors } = chat;
    try {
      await ask(page, "code?");
      const copy = page.locator(".msg-assistant:not(.streaming) .md-code button.md-copy");
      await copy.waitFor({ timeout: 30_000 });
      assert.equal(await copy.textContent(), "Copy");
      await page.evaluate(() => navigator.clipboard.writeText("something else"));
      await copy.click();
      await until(async () => (await copy.textContent()) === "Copied", "the button says Copied");
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), CODE);
      await page.locator(".md-code").screenshot({ path: path.join(outputDir, "61-chat-code-copied.png") });
      assert.deepEqual(errors, []);
    } finally {
      await chat.close();
    }
  });

  test("USE-4: while the answer streams its markdown renders, in the same streaming element", async () => {
    const streamed = "## Plan\n\nFirst **this**, then:\n\n```sh\ncargo build\ncargo test --workspace\necho done\n```\n\nAll set with the plan above.";
    const chat = await openChat([{ say: streamed, gapMs: 120, stream: true }]);
    const { page, errors } = chat;
    try {
      await ask(page, "stream markdown");
      const streaming = page.locator("[data-role=assistant-streaming] .msg-text.md");
      await streaming.locator("h2").waitFor({ timeout: 30_000 });
      await page.evaluate(() => (document.querySelector("[data-role=assistant-streaming] .msg-text").dataset.marked = "1"));
      // An open fence is a code block while it streams; it grows in place.
      await streaming.locator(".md-code pre code").waitFor({ timeout: 30_000 });
      assert.equal(await page.locator("[data-role=assistant-streaming]").count(), 1, "still streaming");
      assert.equal(await streaming.locator("strong").textContent(), "this");
      assert.equal(await page.locator("[data-role=assistant-streaming] .msg-text[data-marked='1']").count(), 1, "the same element, updated");
      await page.screenshot({ path: path.join(outputDir, "62-chat-markdown-streaming.png"), fullPage: true });
      await page.locator(".msg-assistant:not(.streaming)", { hasText: "All set with the plan above." }).waitFor({ timeout: 30_000 });
      const final = page.locator(".msg-assistant:not(.streaming) .msg-text.md");
      assert.equal(await final.locator(".md-code pre code").textContent(), "cargo build\ncargo test --workspace\necho done\n");
      assert.deepEqual(errors, []);
    } finally {
      await chat.close();
    }
  });

  test("USE-4: a tool result stays plain text (its markdown and HTML are not rendered)", async () => {
    const result = "**not bold** <img src=tool-x onerror=\"window.__pwned5 = 1\">\n# not a heading";
    const chat = await openChat(
      [{ call: "mcp__tools__echo", arguments: { text: result } }, { say: "The tool said **that**." }],
      { servers: () => ({ tools: { command: testServerBin, args: [] } }) },
    );
    const { page, errors } = chat;
    try {
      await ask(page, "echo it");
      await page.locator(".msg-assistant", { hasText: "The tool said" }).waitFor({ timeout: 60_000 });
      const tool = page.locator("[data-role=tool]");
      assert.equal(await tool.locator("pre").textContent(), result);
      assert.equal(await tool.locator("strong, h1, img, a").count(), 0, "no element of the result's markdown or HTML");
      assert.equal(await page.locator(".msg-assistant strong").last().textContent(), "that", "the answer itself is rendered");
      assert.equal(await page.evaluate(() => window.__pwned5), undefined);
      assert.deepEqual(errors, []);
    } finally {
      await chat.close();
    }
  });
});
