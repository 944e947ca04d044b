// The chat input's `/` and `@` menus (PRM-1, PRM-3, PRM-4) in headless Chromium against the REAL
// sidecar, our test MCP server with `--prompts` and an echoing fake model, through the JCEF
// adapter: the menus list what `wave/mcp/prompts` and `wave/mcp/resources` return, follow
// `wave/mcp/serversChanged` while open, are driven by the keyboard, and what they insert is sent.

import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, test } from "node:test";
import {
  makeSandbox,
  openChatPage,
  outputDir,
  startSidecar,
  testServerBin,
  until,
  useBrowser,
  useEchoModel,
  writeProject,
} from "./support.mjs";

const ui = useBrowser();
const echo = useEchoModel();

const rows = (page) =>
  page.locator("#completion-menu .completion-item").evaluateAll((els) =>
    els.map((e) => [e.querySelector(".completion-insert")?.textContent, e.querySelector(".completion-hint")?.textContent ?? "", e.getAttribute("aria-selected")]),
  );

/**
 * The chat page on the real sidecar, whose project has our test server `docs` with `--prompts`
 * (not connected yet); `close()` ends the page and the sidecar and removes the sandbox.
 */
async function openDocsChat({ completions = false } = {}) {
  const sandbox = makeSandbox({ empty: true });
  const events = path.join(sandbox.root, "events.log");
  const args = ["--name", "docs", "--prompts", "--event-log", events, ...(completions ? ["--completions"] : [])];
  writeProject(sandbox, { docs: { command: testServerBin, args } });
  const sidecar = await startSidecar(sandbox, { env: { WAVE_BASE_URL: echo.model.baseUrl, WAVE_MODEL: "fake" } });
  const chat = await openChatPage(ui, sidecar, { width: 760, height: 760 });
  return {
    ...chat,
    sidecar,
    input: chat.page.locator("#chat-input"),
    menu: chat.page.locator("#completion-menu"),
    /** What the server was asked of `completion/complete`: `<argument> <value>[ <context>]`. */
    asked: () =>
      (fs.existsSync(events) ? fs.readFileSync(events, "utf8") : "")
        .split("\n")
        .filter((l) => l.startsWith("complete "))
        .map((l) => l.split(" ").slice(2).join(" ")),
    async close() {
      await chat.context.close();
      await sidecar.stop();
      sandbox.cleanup();
    },
  };
}

describe("chat menus against the real sidecar (JCEF bridge)", () => {
  test("PRM-1, PRM-2, PRM-3, PRM-4: `/` offers prompts with argument hints, `@` offers resources and templates, both by keyboard; what they insert is sent", async () => {
    const chat = await openDocsChat();
    const { page, errors, relay, sidecar, input, menu } = chat;
    try {
      // Nothing connected, nothing cached: `/` offers nothing yet.
      await input.click();
      await input.pressSequentially("/");
      await until(async () => relay.sidecarLog.some((e) => e.method === "wave/mcp/prompts"), "the page asked for the prompts");
      assert.equal(await menu.isVisible(), false);
      // PRM-4: the server connects while the menu is asked for; serversChanged brings its prompts.
      await sidecar.request("wave/mcp/connect", { name: "docs" });
      await menu.waitFor({ state: "visible", timeout: 20_000 });
      assert.deepEqual(await rows(page), [
        ["/mcp__docs__review", "<file> [focus]", "true"],
        ["/mcp__docs__hello", "", "false"],
      ]);
      assert.equal(await input.getAttribute("aria-expanded"), "true");
      assert.match(await menu.textContent(), /Review a file/);
      await page.keyboard.press("ArrowDown");
      assert.deepEqual((await rows(page)).map((r) => r[2]), ["false", "true"]);
      await page.keyboard.press("ArrowDown"); // wraps around
      await input.pressSequentially("rev");
      assert.deepEqual((await rows(page)).map((r) => r[0]), ["/mcp__docs__review"]);
      await page.screenshot({ path: path.join(outputDir, "30-chat-prompt-menu.png"), fullPage: true });
      await page.keyboard.press("Enter");
      assert.equal(await input.inputValue(), "/mcp__docs__review ");
      assert.equal(await menu.isVisible(), false);
      await input.pressSequentially('src/a.rs "error handling"');
      await page.keyboard.press("Enter");
      await page
        .locator(".msg-assistant", { hasText: "reply to Review src/a.rs with a focus on error handling." })
        .waitFor({ timeout: 30_000 });

      // `@` offers the resources (all 25, every page), then the template; typing narrows; arrows
      // and Tab insert.
      await input.pressSequentially("compare @");
      await menu.waitFor({ state: "visible" });
      assert.deepEqual(
        (await rows(page)).map((r) => r[0]),
        [...Array.from({ length: 25 }, (_, i) => `@docs:test://doc/${i + 1}`), "@docs:test://doc/{n}"],
      );
      await input.pressSequentially("doc/1");
      assert.deepEqual(
        (await rows(page)).map((r) => r[0]),
        ["@docs:test://doc/1", ...Array.from({ length: 10 }, (_, i) => `@docs:test://doc/${10 + i}`)],
      );
      await page.keyboard.press("ArrowDown");
      await page.keyboard.press("ArrowDown");
      await page.screenshot({ path: path.join(outputDir, "31-chat-resource-menu.png"), fullPage: true });
      await page.keyboard.press("Tab");
      assert.equal(await input.inputValue(), "compare @docs:test://doc/11 ");
      // Escape closes a menu without inserting.
      await input.pressSequentially("and @");
      await menu.waitFor({ state: "visible" });
      await page.keyboard.press("Escape");
      assert.equal(await menu.isVisible(), false);
      assert.equal(await input.inputValue(), "compare @docs:test://doc/11 and @");
      await input.fill("compare @docs:test://doc/11");
      await page.keyboard.press("Escape");
      await page.locator("#chat-send").click();
      await page.locator(".msg-assistant", { hasText: "document 11" }).waitFor({ timeout: 30_000 });
      assert.ok(
        relay.sidecarLog.some((e) => e.method === "wave/mcp/resources" && e.result?.resources?.length === 25 && e.result?.templates?.length === 1),
        "the page asked wave/mcp/resources",
      );

      // PRM-3: a resource template is inserted with its variable selected; typing fills it in.
      await input.pressSequentially("summarize @{");
      await menu.waitFor({ state: "visible" });
      assert.deepEqual(await rows(page), [["@docs:test://doc/{n}", "text/plain", "true"]]);
      await page.keyboard.press("Enter");
      assert.equal(await input.inputValue(), "summarize @docs:test://doc/{n} ");
      assert.deepEqual(
        await input.evaluate((el) => el.value.slice(el.selectionStart, el.selectionEnd)),
        "{n}",
        "the template's variable is selected",
      );
      await input.pressSequentially("7");
      assert.equal(await input.inputValue(), "summarize @docs:test://doc/7 ");
      await page.keyboard.press("Escape");
      await page.locator("#chat-send").click();
      await page.locator(".msg-assistant", { hasText: "document 7" }).waitFor({ timeout: 30_000 });
      await page.screenshot({ path: path.join(outputDir, "32-chat-prompt-and-mention-sent.png"), fullPage: true });
      assert.deepEqual(errors, [], "no script or CSP errors in the page");
    } finally {
      await chat.close();
    }
  });

  test("UI-1, PRM-1: with a prompt-offering server connected, `/mcp` + Enter opens the settings page; a prompt is still picked by keyboard", async () => {
    const chat = await openDocsChat();
    const { page, errors, relay, sidecar, input, menu } = chat;
    const opened = () => relay.hostLog.filter((e) => e.method === "host/openSettings").length;
    try {
      await sidecar.request("wave/mcp/connect", { name: "docs" });

      // `/mcp` matches both prompts: the menu shows them with none selected.
      await input.click();
      await input.pressSequentially("/mcp");
      await menu.waitFor({ state: "visible", timeout: 20_000 });
      assert.deepEqual(await rows(page), [
        ["/mcp__docs__review", "<file> [focus]", "false"],
        ["/mcp__docs__hello", "", "false"],
      ]);
      assert.equal(await input.getAttribute("aria-activedescendant"), null);
      await page.screenshot({ path: path.join(outputDir, "33-chat-mcp-with-prompt-menu.png"), fullPage: true });
      // UI-1: Enter runs `/mcp`: the settings page opens, nothing is inserted or sent.
      await page.keyboard.press("Enter");
      await until(async () => opened() === 1, "host/openSettings after /mcp + Enter");
      assert.equal(await input.inputValue(), "");
      assert.equal(await menu.isVisible(), false);

      // PRM-1: an arrow key selects a row (up from none: the last), and then Enter inserts it.
      await input.pressSequentially("/mcp");
      await menu.waitFor({ state: "visible" });
      await page.keyboard.press("ArrowUp");
      assert.deepEqual((await rows(page)).map((r) => r[2]), ["false", "true"]);
      assert.equal(await input.getAttribute("aria-activedescendant"), "completion-1");
      await page.keyboard.press("Enter");
      assert.equal(await input.inputValue(), "/mcp__docs__hello ");
      assert.equal(await menu.isVisible(), false);
      assert.equal(opened(), 1, "picking a prompt does not open the settings page");
      // Sent, the picked prompt is expanded by the sidecar (PRM-2) and answered.
      await page.keyboard.press("Enter");
      await page.locator(".msg-assistant", { hasText: "reply to Say hello." }).waitFor({ timeout: 30_000 });
      // Tab on `/mcp` (none selected) completes the first row.
      await input.pressSequentially("/mcp");
      await menu.waitFor({ state: "visible" });
      await page.keyboard.press("Tab");
      assert.equal(await input.inputValue(), "/mcp__docs__review ");
      assert.equal(opened(), 1);
      assert.deepEqual(
        relay.sidecarLog.filter((e) => e.method === "wave/session/send").map((e) => e.params.text),
        ["/mcp__docs__hello "],
        "`/mcp` was never sent",
      );
      assert.deepEqual(errors, [], "no script or CSP errors in the page");
    } finally {
      await chat.close();
    }
  });

  test("PRM-3: a menu opened right after the input lost its focus (a click on Send, then `@` at once) stays open; leaving the input still closes it", async () => {
    const chat = await openDocsChat();
    const { page, errors, sidecar, input, menu } = chat;
    /** Resolves once the page's timers due in `ms` have run (the blur's close is due in 150). */
    const pageTimers = (ms) => page.evaluate((wait) => new Promise((r) => setTimeout(r, wait)), ms);
    try {
      await sidecar.request("wave/mcp/connect", { name: "docs" });
      // The resources are asked once, so that the menu below opens without a round trip.
      await input.click();
      await input.pressSequentially("@");
      await menu.waitFor({ state: "visible", timeout: 20_000 });
      await page.keyboard.press("Escape");
      await input.fill("");
      // In one task of the page: the focus goes to Send and back, and `@{` is typed; the close
      // the blur scheduled runs later, when the input has its focus again.
      await page.evaluate(() => {
        const field = document.querySelector("#chat-input");
        document.querySelector("#chat-send").focus();
        field.focus();
        field.value = "summarize @{";
        field.dispatchEvent(new Event("input", { bubbles: true }));
      });
      await menu.waitFor({ state: "visible" });
      await pageTimers(400);
      assert.equal(await menu.isVisible(), true, "the menu is still open after the earlier blur's close was due");
      assert.deepEqual(await rows(page), [["@docs:test://doc/{n}", "text/plain", "true"]]);
      await page.keyboard.press("Enter");
      assert.equal(await input.inputValue(), "summarize @docs:test://doc/{n} ");
      // Leaving the input for good still closes its menu.
      await page.keyboard.press("End");
      await input.pressSequentially("and @");
      await menu.waitFor({ state: "visible" });
      await page.locator("#chat-send").focus();
      await menu.waitFor({ state: "hidden" });
      assert.equal(await input.getAttribute("aria-expanded"), "false");
      assert.deepEqual(errors, [], "no script or CSP errors in the page");
    } finally {
      await chat.close();
    }
  });

  test("SRV-3: after a prompt is chosen its arguments get the server's values (with the arguments given as context), and a resource template's variable too; picked by keyboard and mouse", async () => {
    const chat = await openDocsChat({ completions: true });
    const { page, errors, relay, sidecar, input, menu, asked } = chat;
    const values = async () => (await rows(page)).map((r) => r[0]);
    const menuShows = (expected, what) =>
      until(async () => (await menu.isVisible()) && JSON.stringify(await values()) === JSON.stringify(expected), what);
    try {
      await sidecar.request("wave/mcp/connect", { name: "docs" });
      await input.click();
      await input.pressSequentially("/rev");
      await menu.waitFor({ state: "visible", timeout: 20_000 });
      await page.keyboard.press("Enter");
      assert.equal(await input.inputValue(), "/mcp__docs__review ");
      // The prompt is chosen: its first argument's values, asked with nothing typed yet.
      await menuShows(["src/main.rs", "src/lib.rs", "docs/guide.md", "README.md"], "the values of `file`");
      assert.deepEqual((await rows(page))[0], ["src/main.rs", "file", "true"]);
      await input.pressSequentially("src/");
      await menuShows(["src/main.rs", "src/lib.rs"], "the values of `file` starting with src/");
      await page.keyboard.press("ArrowDown");
      await page.keyboard.press("Enter");
      assert.equal(await input.inputValue(), "/mcp__docs__review src/lib.rs ");
      // The second argument, with the first as context: a Rust file's focus.
      await menuShows(["ownership", "lifetimes"], "the values of `focus` for src/lib.rs");
      await page.screenshot({ path: path.join(outputDir, "34-chat-prompt-argument-values.png"), fullPage: true });
      await page.locator("#completion-menu .completion-item", { hasText: "lifetimes" }).click();
      assert.equal(await input.inputValue(), "/mcp__docs__review src/lib.rs lifetimes ");
      assert.equal(await menu.isVisible(), false, "no argument is left");
      const complete = relay.sidecarLog.filter((e) => e.method === "wave/mcp/complete");
      assert.deepEqual(complete.at(-1).params, {
        sessionId: complete.at(-1).params.sessionId,
        server: "docs",
        ref: { type: "ref/prompt", name: "review" },
        argument: { name: "focus", value: "" },
        context: { arguments: { file: "src/lib.rs" } },
      });
      assert.ok(asked().includes("focus  file=src/lib.rs"), `the server was asked with the context: ${asked().join(" | ")}`);
      await page.keyboard.press("Enter");
      await page
        .locator(".msg-assistant", { hasText: "reply to Review src/lib.rs with a focus on lifetimes." })
        .waitFor({ timeout: 30_000 });

      // `@`: the template is inserted with `{n}` selected, and its values are offered at once.
      await input.pressSequentially("summarize @{");
      await menuShows(["@docs:test://doc/{n}"], "the template");
      await page.keyboard.press("Enter");
      assert.equal(await input.inputValue(), "summarize @docs:test://doc/{n} ");
      await menuShows(
        Array.from({ length: 25 }, (_, i) => String(i + 1)),
        "the values of the template's n",
      );
      await input.pressSequentially("2");
      await menuShows(["2", "20", "21", "22", "23", "24", "25"], "the values of n starting with 2");
      await page.screenshot({ path: path.join(outputDir, "35-chat-template-variable-values.png"), fullPage: true });
      await page.keyboard.press("ArrowDown");
      await page.keyboard.press("ArrowDown");
      await page.keyboard.press("ArrowDown");
      await page.keyboard.press("ArrowDown");
      await page.keyboard.press("Tab");
      assert.equal(await input.inputValue(), "summarize @docs:test://doc/23 ");
      assert.ok(asked().includes("n 2"), `the server was asked for n: ${asked().join(" | ")}`);
      await until(async () => !(await menu.isVisible()) || (await values()).includes("@docs:test://doc/23"), "the menu after the pick");
      await page.keyboard.press("Escape");
      await page.locator("#chat-send").click();
      await page.locator(".msg-assistant", { hasText: "document 23" }).waitFor({ timeout: 30_000 });
      assert.deepEqual(errors, [], "no script or CSP errors in the page");
    } finally {
      await chat.close();
    }
  });

  test("SRV-3: an answer to a question the input no longer asks is dropped; the newer question's values stay", async () => {
    const chat = await openDocsChat({ completions: true });
    const { page, errors, relay, sidecar, input, menu } = chat;
    const values = async () => (await rows(page)).map((r) => r[0]);
    const menuShows = (expected, what) =>
      until(async () => (await menu.isVisible()) && JSON.stringify(await values()) === JSON.stringify(expected), what);
    let held;
    try {
      await sidecar.request("wave/mcp/connect", { name: "docs" });
      await input.click();
      // The page knows the prompt (its list may come after the connect returns) and has its
      // answer for "src", so no question is still on its way when the next one is held.
      await input.pressSequentially("/rev");
      await menu.waitFor({ state: "visible", timeout: 20_000 });
      await input.fill("/mcp__docs__review src");
      await menuShows(["src/main.rs", "src/lib.rs"], "the values for src");
      // The question for "src/" is held back on its way to the sidecar; the user types on.
      held = relay.holdNext("wave/mcp/complete");
      await input.pressSequentially("/");
      assert.deepEqual((await held.reached).argument, { name: "file", value: "src/" });
      await input.fill("/mcp__docs__review R");
      await input.press("End");
      await input.pressSequentially("E");
      await menuShows(["README.md"], "the values for RE");
      held.release();
      await until(
        async () => relay.sidecarLog.some((e) => e.method === "wave/mcp/complete" && e.params.argument.value === "src/"),
        "the held question answered",
      );
      // The late answer (src/main.rs, src/lib.rs) is not shown: a round trip through the relay
      // after it, so the page has had it.
      await page.evaluate(() => window.waveHostQuery(JSON.stringify({ method: "host/notify", params: { level: "info", message: "after" } })));
      await page.evaluate(() => new Promise((r) => setTimeout(r, 0)));
      assert.deepEqual(await values(), ["README.md"]);
      await page.keyboard.press("Enter");
      assert.equal(await input.inputValue(), "/mcp__docs__review README.md ");
      assert.deepEqual(errors, [], "no script or CSP errors in the page");
    } finally {
      // A test that failed while the question was held lets it go, so the page can close.
      held?.release();
      await chat.close();
    }
  });
});
