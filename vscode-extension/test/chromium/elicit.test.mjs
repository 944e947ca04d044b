// A server's question to the user (MCP elicitation, LONG-5, LONG-6) on the shared chat page in
// headless Chromium, through the JCEF adapter as the JetBrains plugin drives it: the form for
// every schema type with its checks, URL mode, one dialog at a time; and a real round through
// the REAL sidecar with the official Python SDK server `tests/peers/py_elicit.py`.

import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, test } from "node:test";
import { peersDir } from "../processes.mjs";
import {
  lastMessage,
  makeSandbox,
  openChatPage,
  outputDir,
  repoDir,
  startFakeModel,
  startSidecar,
  closeAll,
  until,
  useBrowser,
  userPermissions,
  writeProject,
} from "./support.mjs";

const ui = useBrowser();

/** Every kind of property the spec allows. */
const SCHEMA = {
  type: "object",
  properties: {
    name: { type: "string", title: "Name", minLength: 2, maxLength: 8 },
    email: { type: "string", title: "Email", format: "email" },
    site: { type: "string", title: "Web site", format: "uri" },
    born: { type: "string", title: "Birthday", format: "date" },
    meet: { type: "string", title: "Meeting", format: "date-time" },
    age: { type: "integer", title: "Age", minimum: 0, maximum: 150, default: 30 },
    score: { type: "number", title: "Score", minimum: 0.5, maximum: 9.5 },
    news: { type: "boolean", title: "Newsletter", default: true },
    size: { type: "string", title: "Size", enum: ["s", "m", "l"], enumNames: ["Small", "Medium", "Large"], default: "m" },
    role: { type: "string", title: "Role", oneOf: [{ const: "dev", title: "Developer" }, { const: "pm", title: "Manager" }] },
    tags: { type: "array", title: "Tags", items: { type: "string", enum: ["a", "b", "c"] }, maxItems: 2 },
  },
  required: ["name", "email", "role"],
};

describe("elicitation on the chat page (JCEF bridge)", () => {
  test("LONG-5: a form for every schema type, checked before it is sent; LONG-6: URL mode; one dialog at a time", async () => {
    const sandbox = makeSandbox({ empty: true });
    const sidecar = await startSidecar(sandbox);
    const { context, page, relay, errors } = await openChatPage(ui, sidecar, { width: 700, height: 1100 });
    try {
      const answer = relay.ask("wave/session/elicit", {
        sessionId: "default",
        server: "shop",
        mode: "form",
        message: "Tell us about you",
        requestedSchema: SCHEMA,
      });
      await page.locator("#elicit[data-mode=form]").waitFor();
      assert.equal(await page.locator("#elicit-server").textContent(), "shop asks");
      assert.equal(await page.locator("#elicit-message").textContent(), "Tell us about you");
      const kinds = await page.locator(".elicit-field").evaluateAll((els) => els.map((e) => [e.dataset.field, e.dataset.kind]));
      assert.deepEqual(kinds, [
        ["name", "text"],
        ["email", "text"],
        ["site", "text"],
        ["born", "text"],
        ["meet", "text"],
        ["age", "integer"],
        ["score", "number"],
        ["news", "boolean"],
        ["size", "choice"],
        ["role", "choice"],
        ["tags", "choices"],
      ]);
      const required = await page.locator(".elicit-field:has(.elicit-required)").evaluateAll((els) => els.map((e) => e.dataset.field));
      assert.deepEqual(required, ["name", "email", "role"]);
      assert.equal(await page.locator("#elicit-field-email").getAttribute("type"), "email");
      assert.equal(await page.locator("#elicit-field-site").getAttribute("type"), "url");
      assert.equal(await page.locator("#elicit-field-born").getAttribute("type"), "date");
      // Defaults.
      assert.equal(await page.locator("#elicit-field-age").inputValue(), "30");
      assert.equal(await page.locator("#elicit-field-news").isChecked(), true);
      assert.equal(await page.locator("#elicit-field-size option:checked").textContent(), "Medium");
      const roleLabels = await page.locator("#elicit-field-role option").allTextContents();
      assert.deepEqual(roleLabels, ["Choose…", "Developer", "Manager"]);

      // Everything wrong at once: nothing is sent, every field says why.
      await page.locator("#elicit-field-name").fill("x");
      await page.locator("#elicit-field-site").fill("not a url");
      await page.locator("#elicit-field-meet").fill("tomorrow");
      await page.locator("#elicit-field-age").fill("1.5");
      await page.locator("#elicit-field-score").fill("10");
      for (const i of [0, 1, 2]) await page.locator(`#elicit-field-tags-${i}`).check();
      await page.locator("#elicit-accept").click();
      const errorOf = (name) => page.locator(`#elicit-error-${name}`).textContent();
      assert.equal(await errorOf("name"), "At least 2 characters");
      assert.equal(await errorOf("email"), "Required");
      assert.equal(await errorOf("site"), "Not a URL");
      assert.equal(await errorOf("meet"), "Not a date and time (2025-01-31T09:00:00Z)");
      assert.equal(await errorOf("age"), "Not a whole number");
      assert.equal(await errorOf("score"), "At most 9.5");
      assert.equal(await errorOf("role"), "Required");
      assert.equal(await errorOf("tags"), "Pick at most 2");
      await page.locator("#elicit-field-email").fill("nope");
      await page.locator("#elicit-field-name").fill("far too long");
      await page.locator("#elicit-accept").click();
      assert.equal(await errorOf("email"), "Not an email address");
      assert.equal(await errorOf("name"), "At most 8 characters");
      assert.equal(relay.hostLog.filter((l) => l.method === "host/answer").length, 0, "nothing sent while the form is wrong");
      await page.screenshot({ path: path.join(outputDir, "elicit-form-errors.png") });

      await page.locator("#elicit-field-name").fill("Ada");
      await page.locator("#elicit-field-email").fill("ada@example.com");
      await page.locator("#elicit-field-site").fill("https://ada.example.com");
      await page.locator("#elicit-field-born").fill("1815-12-10");
      await page.locator("#elicit-field-meet").fill("2025-01-31T09:00:00Z");
      await page.locator("#elicit-field-age").fill("36");
      await page.locator("#elicit-field-score").fill("7.5");
      await page.locator("#elicit-field-news").uncheck();
      await page.locator("#elicit-field-role").selectOption({ label: "Manager" });
      await page.locator("#elicit-field-tags-1").uncheck();
      await page.screenshot({ path: path.join(outputDir, "elicit-form-filled.png") });
      await page.locator("#elicit-accept").click();
      assert.deepEqual(await answer, {
        action: "accept",
        content: {
          name: "Ada",
          email: "ada@example.com",
          site: "https://ada.example.com",
          born: "1815-12-10",
          meet: "2025-01-31T09:00:00Z",
          age: 36,
          score: 7.5,
          news: false,
          size: "m",
          role: "pm",
          tags: ["a", "c"],
        },
      });
      await until(async () => (await page.locator("#chat-elicit").isHidden()) || undefined, "the dialog closes");

      // One at a time: the second waits until the first is answered.
      const declined = relay.ask("wave/session/elicit", {
        sessionId: "default", server: "one", mode: "form", message: "First", requestedSchema: { type: "object", properties: {} },
      });
      const cancelled = relay.ask("wave/session/elicit", {
        sessionId: "default", server: "two", mode: "form", message: "Second", requestedSchema: { type: "object", properties: {} },
      });
      await page.locator("#elicit-message", { hasText: "First" }).waitFor();
      assert.equal(await page.evaluate(() => window.wavePage.elicit.queued), 1);
      assert.equal(await page.locator("#elicit").count(), 1);
      await page.locator("#elicit-decline").click();
      assert.deepEqual(await declined, { action: "decline" });
      await page.locator("#elicit-message", { hasText: "Second" }).waitFor();
      await page.locator("#elicit-cancel").click();
      assert.deepEqual(await cancelled, { action: "cancel" });

      // URL mode: the server and the URL's host are shown; Accept is the only way to open it.
      const url = "https://accounts.example.com/connect?session=1";
      const urlAnswer = relay.ask("wave/session/elicit", {
        sessionId: "default", server: "bank", mode: "url", message: "Connect your account", url, elicitationId: "e-7",
      });
      await page.locator("#elicit[data-mode=url]").waitFor();
      assert.equal(await page.locator("#elicit-server").textContent(), "bank asks");
      assert.equal(await page.locator("#elicit-host").textContent(), "accounts.example.com");
      assert.equal(await page.locator("#elicit-url").textContent(), url);
      assert.equal(await page.locator("#elicit-accept").textContent(), "Open accounts.example.com");
      await page.screenshot({ path: path.join(outputDir, "elicit-url.png") });
      await page.locator("#elicit-accept").click();
      assert.deepEqual(await urlAnswer, { action: "accept" });
      await page.locator("#elicit-waiting[data-server=bank]").waitFor();
      await relay.push("wave/session/elicitationComplete", { sessionId: "default", server: "bank", elicitationId: "e-7" });
      await until(async () => (await page.locator("#elicit-waiting").count()) === 0 || undefined, "the waiting state closes");
      assert.deepEqual(errors, []);
    } finally {
      await closeAll(context, sidecar, sandbox);
    }
  });

  test("LONG-5: the real sidecar: a Python SDK server's form is filled on the page and its tool gets the answer", async () => {
    const python = path.join(peersDir, "venv", "bin", "python");
    if (!fs.existsSync(python)) {
      if (process.env.CI) assert.fail(`${python} is missing: run bash scripts/install-peers.sh`);
      test.skip?.("PyPI mcp not installed");
      return;
    }
    // The first answer of a turn calls the form tool, the next says "done".
    const model = await startFakeModel((request) =>
      lastMessage(request)?.role === "tool" ? { say: "done" } : { call: "mcp__py__ask_form", arguments: {} },
    );
    const sandbox = makeSandbox({ empty: true });
    // Approved, and its tools allowed in the user's own settings: this test is about the form.
    writeProject(sandbox, { py: { command: python, args: [path.join(repoDir, "tests", "peers", "py_elicit.py")] } });
    userPermissions(sandbox.home, { allow: ["mcp__py__*"] });
    const sidecar = await startSidecar(sandbox, { env: { WAVE_BASE_URL: model.baseUrl, WAVE_MODEL: "fake" } });
    const { context, page, errors } = await openChatPage(ui, sidecar, { width: 700, height: 1100 });
    try {
      await page.locator("#chat-input").fill("sign me up");
      await page.locator("#chat-send").click();
      await page.locator("#elicit[data-mode=form]").waitFor({ timeout: 60_000 });
      assert.equal(await page.locator("#elicit-server").textContent(), "py asks");
      await page.locator("#elicit-field-name").fill("Ada");
      await page.locator("#elicit-field-age").fill("36");
      await page.locator("#elicit-field-colour").selectOption({ label: "red" });
      await page.locator("#elicit-accept").click();
      const tool = page.locator(".msg-tool pre", { hasText: "accept:" });
      await tool.waitFor({ state: "attached", timeout: 60_000 });
      assert.equal(await tool.textContent(), 'accept: {"age": 36, "colour": "red", "name": "Ada", "subscribe": false}');
      await page.locator(".msg-assistant", { hasText: "done" }).waitFor({ timeout: 30_000 });
      assert.deepEqual(errors, []);
    } finally {
      await closeAll(context, sidecar, model, sandbox);
    }
  });
});
