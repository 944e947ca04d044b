// END TO END in a real VS Code (code-server), USE-4: the agent's answer in the chat view is
// rendered markdown (a heading, a list, a code block with Copy); a link in it asks VS Code, which
// shows the URL in a modal and opens nothing when the user cancels. Screenshots:
// target/test-output/vscode-e2e/markdown-*.png.

import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { after, afterEach, before, describe, test } from "node:test";
import {
  closeWorkbench,
  explainFailure,
  installExtension,
  makeSandbox,
  openWorkbench,
  outputDir,
  runCommand,
  startFakeModel,
  webviewFrame,
  writeUserSettings,
} from "./support.mjs";

const ANSWER = [
  "## Run the tests",
  "",
  "Use **cargo** from the repository root:",
  "",
  "- `cargo build` first",
  "- then the tests",
  "",
  "```sh",
  "cargo nextest run --workspace",
  "```",
  "",
  "See [the guide](https://example.com/guide) for more.",
].join("\n");

const sb = makeSandbox();
let model;
let server;
let browser;
let page;

before(async () => {
  fs.mkdirSync(outputDir, { recursive: true });
  model = await startFakeModel(() => ({ say: ANSWER }));
  writeUserSettings(sb, { "wave.model.baseUrl": model.baseUrl, "wave.model.name": "fake-model" });
  installExtension(sb);
  ({ server, browser, page } = await openWorkbench(sb));
});

afterEach((t) => explainFailure(t, sb, page));
after(() => closeWorkbench(sb, { browser, server, model }));

describe("USE-4: the chat's markdown in a real VS Code (code-server)", () => {
  test("USE-4: the answer renders as markdown with a code block; a link asks VS Code first and opens nothing on Cancel", async () => {
    await runCommand(page, "Wave: Open Chat");
    const chat = await webviewFrame(page, "chat", 60_000);
    await chat.locator("#chat-input").fill("How do I run the tests?");
    await chat.locator("#chat-input").press("Enter");
    const answer = chat.locator(".msg-assistant .msg-text.md");
    await answer.locator(".md-code pre code").waitFor({ timeout: 90_000 });
    assert.equal(await answer.locator("h2").textContent(), "Run the tests");
    assert.deepEqual(await answer.locator("ul > li").allTextContents(), ["cargo build first", "then the tests"]);
    assert.equal(await answer.locator(".md-code pre code").textContent(), "cargo nextest run --workspace\n");
    assert.equal(await answer.locator(".md-code button.md-copy").textContent(), "Copy");
    await page.screenshot({ path: path.join(outputDir, "markdown-answer.png") });

    // The link: VS Code asks, showing the URL; Cancel opens nothing.
    const pagesBefore = browser.contexts().flatMap((c) => c.pages()).length;
    await answer.locator("a.md-link", { hasText: "the guide" }).click();
    const dialog = page.locator(".monaco-dialog-box", { hasText: "Open the link from the Wave chat in your browser?" });
    await dialog.waitFor({ timeout: 30_000 });
    assert.ok((await dialog.textContent()).includes("https://example.com/guide"), "the dialog shows the URL");
    await page.screenshot({ path: path.join(outputDir, "markdown-link-confirm.png") });
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "detached", timeout: 30_000 });
    assert.equal(browser.contexts().flatMap((c) => c.pages()).length, pagesBefore, "nothing opened");
  });
});
