// Nothing runs, and no secret leaves, without the user's consent (TRUST-1 … TRUST-8), on the
// shared pages in headless Chromium against the REAL sidecar: the chat's approval card before a
// turn dials unapproved project servers, the tool confirmation card (the official Python SDK's
// annotated tools, tests/peers/py_annotated.py), Stop while a card is open, the settings page's
// needs-approval rows (Approve, Revoke approval, rows of the same name), a changed tool
// definition, and the VS Code bridge taking messages only from its host frame.

import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, test } from "node:test";
import { peersDir, pidAlive } from "../processes.mjs";
import {
  attachRelay,
  lastMessage,
  makeSandbox,
  openChatPage,
  outputDir,
  repoDir,
  serverPids,
  startFakeModel,
  startSidecar,
  testServerBin,
  closeAll,
  until,
  useBrowser,
  writeProject,
} from "./support.mjs";

const ui = useBrowser();
const shot = (page, name) => page.screenshot({ path: path.join(outputDir, `${name}.png`), fullPage: true });
const python = path.join(peersDir, "venv", "bin", "python");
const annotated = path.join(repoDir, "tests", "peers", "py_annotated.py");

/** The Python SDK peer is installed (scripts/install-peers.sh); CI must have it. */
function havePython(t) {
  if (fs.existsSync(python)) return true;
  if (process.env.CI) assert.fail(`${python} is missing: run bash scripts/install-peers.sh`);
  t.skip("PyPI mcp not installed (scripts/install-peers.sh)");
  return false;
}

/** The lines the annotated peer wrote: one per call that really ran. */
const callsOf = (file) => (fs.existsSync(file) ? fs.readFileSync(file, "utf8").split("\n").filter(Boolean) : []);

/** Sends `text` from the chat page and waits until that turn ended (the Send button is back). */
async function send(page, text) {
  await page.locator("#chat-input").fill(text);
  await page.locator("#chat-send").click();
}

const answersOf = (relay) => relay.hostLog.filter((e) => e.method === "host/answer").map((e) => e.params);

describe("the chat's consent cards against the real sidecar (JCEF bridge)", () => {
  test("TRUST-1, TRUST-3: the approval card names what would run; nothing runs before Approve; the approved server connects, the other stays waiting", async () => {
    const sandbox = makeSandbox({ empty: true });
    // A user-level `db` the project's `db` would replace for this project (shadows).
    fs.writeFileSync(
      path.join(sandbox.home, ".wave", "mcp.json"),
      JSON.stringify({ mcpServers: { db: { command: testServerBin, args: ["--name", "user-db", "--pid-file", path.join(sandbox.root, "user-db.pid")] } } }),
    );
    const dbPids = path.join(sandbox.root, "db.pid");
    const otherPids = path.join(sandbox.root, "other.pid");
    writeProject(
      sandbox,
      {
        db: {
          command: testServerBin,
          args: ["--name", "db", "--tools", "echo,pid", "--pid-file", dbPids, "--instructions", "token ${WAVE_TEST_SECRET}"],
          env: { DB_MODE: "v4lue-never-shown" },
        },
        other: { command: testServerBin, args: ["--name", "other", "--pid-file", otherPids] },
      },
      { approved: false },
    );
    const model = await startFakeModel(() => ({ say: "hello from the model" }));
    const sidecar = await startSidecar(sandbox, { env: { WAVE_BASE_URL: model.baseUrl, WAVE_MODEL: "fake", WAVE_TEST_SECRET: "s3cret-value" } });
    const { context, page, relay, errors } = await openChatPage(ui, sidecar, { width: 760, height: 1000 });
    try {
      await send(page, "hi");
      const card = page.locator(".consent-approve");
      await card.waitFor();
      // TRUST-1: asked before anything of the project ran.
      assert.equal(fs.existsSync(dbPids), false, "db ran before it was approved");
      assert.equal(fs.existsSync(otherPids), false, "other ran before it was approved");
      assert.deepEqual(await card.locator(".approve-server").evaluateAll((els) => els.map((e) => e.dataset.server)), ["db", "other"]);
      const db = card.locator('.approve-server[data-server="db"]');
      assert.equal(
        await db.locator(".approval-target").textContent(),
        `${testServerBin} --name db --tools echo,pid --pid-file ${dbPids} --instructions 'token \${WAVE_TEST_SECRET}'`,
      );
      assert.equal(await db.locator(".approval-config").textContent(), `from ${path.join(sandbox.workdir, ".mcp.json")}`);
      assert.equal(await db.locator('[data-note="shadows"]').textContent(), "Replaces your user-level server of the same name in this project.");
      assert.equal(await db.locator('[data-note="envKeys"]').textContent(), "Sets environment variables: DB_MODE");
      assert.equal(
        await db.locator('[data-note="variables"]').textContent(),
        "Reads your environment variables: ${WAVE_TEST_SECRET}. Their values are sent where the entry says.",
      );
      assert.equal(await card.locator('.approve-server[data-server="other"] [data-note]').count(), 0);
      const cardText = await card.textContent();
      assert.ok(!cardText.includes("v4lue-never-shown") && !cardText.includes("s3cret-value"), "no value of env or variables is shown");
      await shot(page, "trust-01-approval-card");

      // Only db: other's box unchecked.
      await card.locator('input[data-approve="other"]').uncheck();
      await card.locator("button[data-answer=approve]").click();
      await until(() => answersOf(relay).length === 1, "the page answered");
      assert.deepEqual(answersOf(relay)[0].result, { approved: ["db"] });
      await page.locator('[data-role="assistant"]', { hasText: "hello from the model" }).waitFor();
      assert.equal(await page.locator(".consent").count(), 0, "the card closed");
      const [pid] = serverPids(sandbox, "db");
      assert.ok(pid && pidAlive(pid), "the approved server runs");
      assert.equal(fs.existsSync(otherPids), false, "the server left unchecked never ran");
      const snapshot = await sidecar.request("wave/mcp/servers", {});
      const project = (name) => snapshot.servers.find((s) => s.name === name && s.source === "project");
      assert.equal(project("db").status, "connected");
      assert.equal(project("other").status, "needs-approval");
      assert.equal(project("other").approval.name, "other");

      // Not asked again about `other` in this session.
      await send(page, "again");
      await until(async () => (await page.locator('[data-role="assistant"]').count()) === 2, "the second turn's answer");
      assert.equal(relay.asks.filter((a) => a.method === "wave/session/approveServers").length, 1);
      assert.equal(fs.existsSync(otherPids), false);
      assert.deepEqual(errors, []);
    } finally {
      await closeAll(context, sidecar, model, sandbox);
    }
  });

  test("TRUST-3: Don't approve runs nothing; the turn goes on without the server", async () => {
    const sandbox = makeSandbox({ empty: true });
    const pids = path.join(sandbox.root, "db.pid");
    writeProject(sandbox, { db: { command: testServerBin, args: ["--name", "db", "--pid-file", pids] } }, { approved: false });
    const model = await startFakeModel(() => ({ say: "no servers today" }));
    const sidecar = await startSidecar(sandbox, { env: { WAVE_BASE_URL: model.baseUrl, WAVE_MODEL: "fake" } });
    const { context, page, relay } = await openChatPage(ui, sidecar);
    try {
      await send(page, "hi");
      await page.locator(".consent-approve").waitFor();
      await page.locator(".consent-approve button[data-answer=deny]").click();
      await page.locator('[data-role="assistant"]', { hasText: "no servers today" }).waitFor();
      assert.deepEqual(answersOf(relay)[0].result, { approved: [] });
      assert.equal(fs.existsSync(pids), false, "nothing of the server ran");
      const snapshot = await sidecar.request("wave/mcp/servers", {});
      assert.equal(snapshot.servers.find((s) => s.name === "db").status, "needs-approval");
    } finally {
      await closeAll(context, sidecar, model, sandbox);
    }
  });

  test("TRUST-5: the tool card shows title, server, badges (destructive first) and the arguments as text; Deny → declined, nothing ran; Allow for this session → the next call does not ask", async (t) => {
    if (!havePython(t)) return;
    const sandbox = makeSandbox({ empty: true });
    const calls = path.join(sandbox.root, "calls.txt");
    writeProject(sandbox, { py: { command: python, args: [annotated, calls] } });
    const hostile = '<img src=x onerror="document.title=1">users';
    const model = await startFakeModel((request, n) => {
      const last = lastMessage(request);
      if (n === 1) return { call: "mcp__py__drop_table", arguments: { table: hostile } };
      if (last?.role === "tool" && n === 2) return { say: "ok, not dropped" };
      if (n === 3) return { call: "mcp__py__lookup", arguments: { query: "cats" } };
      if (n === 4) return { call: "mcp__py__lookup", arguments: { query: "dogs" } };
      return { say: "looked up both" };
    });
    const sidecar = await startSidecar(sandbox, { env: { WAVE_BASE_URL: model.baseUrl, WAVE_MODEL: "fake" } });
    const { context, page, relay, errors } = await openChatPage(ui, sidecar, { width: 760, height: 900 });
    try {
      await send(page, "drop the users table");
      const card = page.locator(".consent-confirm");
      await card.waitFor();
      assert.equal(await card.locator(".consent-title").textContent(), "Allow Drop a table?");
      assert.equal(await card.locator(".consent-server").textContent(), "Tool drop_table of the MCP server py");
      assert.equal(await card.getAttribute("data-tool"), "mcp__py__drop_table");
      assert.match(await card.getAttribute("class"), /\bdestructive\b/);
      assert.deepEqual(await card.locator("[data-badge]").evaluateAll((els) => els.map((e) => [e.dataset.badge, e.textContent])), [
        ["destructive", "⚠ destructive"],
      ]);
      assert.equal(await card.locator(".consent-args").textContent(), JSON.stringify({ table: hostile }, null, 2));
      assert.equal(await card.locator("img").count(), 0, "server and model text is never markup");
      assert.deepEqual(await card.locator("button[data-decision]").allTextContents(), ["Allow once", "Allow for this session", "Always allow", "Deny"]);
      assert.equal(await card.locator('[data-note="definitionChanged"]').count(), 0);
      // The call in the log waits for the user; it is not shown as running.
      assert.equal(await page.locator(".tool-waiting").textContent(), "mcp__py__drop_table waits for your answer below");
      await shot(page, "trust-02-confirm-destructive");
      await card.locator('button[data-decision="deny"]').click();
      await page.locator('[data-role="assistant"]', { hasText: "ok, not dropped" }).waitFor();
      assert.deepEqual(answersOf(relay)[0].result, { decision: "deny" });
      // The model got a tool result saying the user declined; the tool never ran.
      const declined = lastMessage(model.requests[1]);
      assert.equal(declined.role, "tool");
      assert.match(declined.content, /declined/);
      assert.deepEqual(callsOf(calls), []);
      assert.equal(await page.title(), "Wave", "no script of the arguments ran");

      // Read-only and open-world: badges, no destructive mark; Allow for this session.
      await send(page, "look up cats and dogs");
      await until(async () => (await card.count()) === 1 && (await card.getAttribute("data-tool")) === "mcp__py__lookup", "the lookup card");
      assert.equal(await card.locator(".consent-title").textContent(), "Allow Look something up?");
      assert.deepEqual(await card.locator("[data-badge]").evaluateAll((els) => els.map((e) => e.dataset.badge)), ["readOnly", "openWorld"]);
      assert.doesNotMatch(await card.getAttribute("class"), /\bdestructive\b/);
      assert.equal(await card.locator('[data-badge="openWorld"]').getAttribute("title"), "The server says this tool reaches outside systems (for example the internet).");
      await shot(page, "trust-03-confirm-read-only");
      await card.locator('button[data-decision="session"]').click();
      await page.locator('[data-role="assistant"]', { hasText: "looked up both" }).waitFor();
      assert.deepEqual(callsOf(calls), ['lookup {"query": "cats"}', 'lookup {"query": "dogs"}']);
      const confirms = relay.asks.filter((a) => a.method === "wave/session/confirmTool");
      assert.deepEqual(
        confirms.map((a) => [a.params.tool, a.params.arguments]),
        [
          ["drop_table", { table: hostile }],
          ["lookup", { query: "cats" }],
        ],
        "the second lookup did not ask",
      );
      assert.equal(await page.locator(".consent").count(), 0);
      assert.deepEqual(errors, []);
    } finally {
      await closeAll(context, sidecar, model, sandbox);
    }
  });

  test("TRUST-5: Stop while a tool card is open closes it; the turn ends stopped and the tool never ran", async (t) => {
    if (!havePython(t)) return;
    const sandbox = makeSandbox({ empty: true });
    const calls = path.join(sandbox.root, "calls.txt");
    writeProject(sandbox, { py: { command: python, args: [annotated, calls] } });
    const model = await startFakeModel(() => ({ call: "mcp__py__plain", arguments: { text: "x" } }));
    const sidecar = await startSidecar(sandbox, { env: { WAVE_BASE_URL: model.baseUrl, WAVE_MODEL: "fake" } });
    const { context, page, relay, errors } = await openChatPage(ui, sidecar);
    try {
      await send(page, "say x");
      await page.locator(".consent-confirm").waitFor();
      // No annotations: the tool's own name, no badges.
      assert.equal(await page.locator(".consent-confirm .consent-title").textContent(), "Allow plain?");
      assert.equal(await page.locator(".consent-confirm [data-badge]").count(), 0);
      await page.locator("#chat-stop").click();
      await until(async () => (await page.locator(".consent").count()) === 0, "the card closed");
      await page.locator(".chat-error", { hasText: "Stopped." }).waitFor();
      // The host was told the question is over (an error answer), so it forgets it too.
      await until(() => answersOf(relay).length === 1, "the page answered");
      assert.equal(answersOf(relay)[0].error, "the turn ended");
      assert.deepEqual(callsOf(calls), []);
      const history = await sidecar.request("wave/session/history", { sessionId: "default" });
      assert.deepEqual(history.runningTurns, []);
      assert.deepEqual(errors, []);
    } finally {
      await closeAll(context, sidecar, model, sandbox);
    }
  });

  test("TRUST-6: Always allow is pinned to the tool's definition; once it changes, the next call asks again and says so, and the settings page marks the tool", async (t) => {
    if (!havePython(t)) return;
    const sandbox = makeSandbox({ empty: true });
    const calls = path.join(sandbox.root, "calls.txt");
    const description = path.join(sandbox.root, "lookup-description.txt");
    writeProject(sandbox, { py: { command: python, args: [annotated, calls, description] } });
    const model = await startFakeModel((request) =>
      lastMessage(request)?.role === "tool" ? { say: "done" } : { call: "mcp__py__lookup", arguments: { query: "q" } },
    );
    const sidecar = await startSidecar(sandbox, { env: { WAVE_BASE_URL: model.baseUrl, WAVE_MODEL: "fake" } });
    const chat = await openChatPage(ui, sidecar, { width: 760, height: 900 });
    let settings;
    try {
      await send(chat.page, "look it up");
      await chat.page.locator(".consent-confirm").waitFor();
      await chat.page.locator('.consent-confirm button[data-decision="always"]').click();
      await until(() => callsOf(calls).length === 1, "the call ran");
      await until(async () => (await chat.page.locator('[data-role="assistant"]', { hasText: "done" }).count()) === 1, "turn 1 done");

      // The server now presents another definition of `lookup` (its description).
      fs.writeFileSync(description, "And the news.");
      await sidecar.request("wave/mcp/disconnect", { name: "py" });
      await sidecar.request("wave/mcp/connect", { name: "py" });
      const row = (await sidecar.request("wave/mcp/servers", {})).servers.find((s) => s.name === "py");
      assert.equal(row.tools.find((x) => x.name === "lookup").definitionChanged, true);
      assert.equal(row.tools.find((x) => x.name === "plain").definitionChanged, false);

      await send(chat.page, "look it up again");
      const card = chat.page.locator(".consent-confirm");
      await card.waitFor();
      assert.equal(await card.locator('[data-note="definitionChanged"]').textContent(), "This tool's definition changed since you allowed it.");
      await shot(chat.page, "trust-04-confirm-definition-changed");
      await card.locator('button[data-decision="deny"]').click();
      await until(async () => (await chat.page.locator('[data-role="assistant"]', { hasText: "done" }).count()) === 2, "turn 2 done");
      assert.equal(callsOf(calls).length, 1, "denied: it did not run again");

      // The settings page marks the tool (its permission no longer applies).
      const context = await ui.browser.newContext({ viewport: { width: 1100, height: 700 } });
      const page = await context.newPage();
      settings = { context, page };
      await attachRelay(page, sidecar);
      await page.goto(`${ui.web.url}?page=settings&lang=en`);
      await page.waitForSelector("body[data-ready=true]");
      await page.locator('button.source-tab[data-tab="project"]').click();
      const py = page.locator('li.server-row[data-server="py"]');
      await py.locator("details.tool-list summary").click();
      const mark = py.locator('li.tool[data-tool="lookup"] [data-mark="definitionChanged"]');
      assert.equal(await mark.textContent(), "changed");
      assert.match(await mark.getAttribute("title"), /definition changed since you allowed it/);
      assert.equal(await py.locator('li.tool[data-tool="plain"] [data-mark]').count(), 0);
      await shot(page, "trust-05-settings-tool-changed");
    } finally {
      await closeAll(settings?.context, chat.context, sidecar, model, sandbox);
    }
  });
});

describe("the settings page's needs-approval rows against the real sidecar (JCEF bridge)", () => {
  test("TRUST-1, TRUST-3: a needs-approval row shows what approving runs; Approve connects it; Revoke approval ends it; a same-named user row stays its own", async () => {
    const sandbox = makeSandbox({ approved: false });
    // A user-level `beta` beside the project's unapproved `beta` (TRUST-1: both are listed).
    fs.writeFileSync(
      path.join(sandbox.home, ".wave", "mcp.json"),
      JSON.stringify({ mcpServers: { beta: { command: testServerBin, args: ["--name", "user-beta", "--pid-file", path.join(sandbox.root, "user-beta.pid")] } } }),
    );
    const sidecar = await startSidecar(sandbox);
    const context = await ui.browser.newContext({ viewport: { width: 1100, height: 900 } });
    const page = await context.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    const relay = await attachRelay(page, sidecar);
    try {
      await page.goto(`${ui.web.url}?page=settings&lang=en`);
      await page.waitForSelector("body[data-ready=true]");
      await page.locator('button.source-tab[data-tab="project"]').click();
      const row = (name) => page.locator(`li.server-row[data-server="${name}"][data-source="project"]`);
      for (const name of ["alpha", "beta", "broken"]) assert.equal(await row(name).getAttribute("data-status"), "needs-approval", name);
      const alpha = row("alpha");
      assert.equal(await alpha.locator(".status").textContent(), "Needs approval");
      assert.match(await alpha.locator(".approval-reason").textContent(), /runs only once you approve it: approve it with `wave-mcp approve alpha`/);
      assert.equal(
        await alpha.locator(".approval-target").textContent(),
        `${testServerBin} --name alpha --tools echo,add,pid --slow-initialize-ms 800 --pid-file ${path.join(sandbox.root, "alpha.pid")}`,
      );
      assert.equal(await alpha.locator("button[data-action=approve]").textContent(), "Approve");
      assert.equal(await alpha.locator("button[data-action=revoke]").count(), 0);
      assert.equal(await row("beta").locator('[data-note="shadows"]').textContent(), "Replaces your user-level server of the same name in this project.");
      assert.equal(await row("broken").locator('[data-note="variables"]').textContent(), "Reads your environment variables: ${SECRET_TOKEN}. Their values are sent where the entry says.");
      assert.equal(fs.existsSync(path.join(sandbox.root, "alpha.pid")), false, "listing runs nothing");
      await shot(page, "trust-06-settings-needs-approval");
      // The user-level beta is its own row, under its own tab, with its own buttons.
      await page.locator('button.source-tab[data-tab="user"]').click();
      const userBeta = page.locator('li.server-row[data-server="beta"][data-source="user"]');
      assert.equal(await userBeta.getAttribute("data-status"), "disconnected");
      assert.equal(await userBeta.locator("button[data-action=connect]").count(), 1);
      await page.locator('button.source-tab[data-tab="project"]').click();

      await alpha.locator("button[data-action=approve]").click();
      await until(async () => (await alpha.locator("button[data-action=approve]").textContent()) === "Approving...", "Approving...");
      await until(async () => (await alpha.getAttribute("data-status")) === "connected", "alpha approved and connected");
      const [pid] = serverPids(sandbox, "alpha");
      assert.ok(pid && pidAlive(pid), "alpha runs");
      assert.equal(await alpha.locator(".approval-details").count(), 0);
      assert.equal(await alpha.locator("button[data-action=revoke]").textContent(), "Revoke approval");
      assert.ok(relay.sidecarLog.some((e) => e.method === "wave/mcp/approve" && e.params.name === "alpha"));
      await shot(page, "trust-07-settings-approved");

      await alpha.locator("button[data-action=revoke]").click();
      await until(async () => (await alpha.getAttribute("data-status")) === "needs-approval", "alpha needs approval again");
      await until(() => !pidAlive(pid), "alpha's process ended");
      assert.equal(await alpha.locator("button[data-action=approve]").count(), 1);
      assert.ok(relay.sidecarLog.some((e) => e.method === "wave/mcp/revoke" && e.params.name === "alpha"));
      assert.deepEqual(errors, []);
    } finally {
      await closeAll(context, sidecar, sandbox);
    }
  });

  test("TRUST-7: a tool whose text had hidden characters is marked; what the server wrote is shown as text", async () => {
    const sandbox = makeSandbox({ empty: true });
    fs.writeFileSync(
      path.join(sandbox.home, ".wave", "mcp.json"),
      JSON.stringify({ mcpServers: { odd: { command: testServerBin, args: ["--name", "odd", "--tools", "echo", "--hostile-text"] } } }),
    );
    const sidecar = await startSidecar(sandbox);
    const context = await ui.browser.newContext({ viewport: { width: 1100, height: 700 } });
    const page = await context.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await attachRelay(page, sidecar);
    try {
      await page.goto(`${ui.web.url}?page=settings&lang=en`);
      await page.waitForSelector("body[data-ready=true]");
      const odd = page.locator('li.server-row[data-server="odd"][data-source="user"]');
      await odd.locator("button[data-action=connect]").click();
      await until(async () => (await odd.getAttribute("data-status")) === "connected", "odd connected");
      await odd.locator("details.tool-list summary").click();
      const mark = odd.locator('li.tool[data-tool="hostile"] [data-mark="hiddenText"]');
      assert.equal(await mark.textContent(), "hidden text removed");
      assert.match(await mark.getAttribute("title"), /hidden characters/);
      assert.equal(await odd.locator('li.tool[data-tool="echo"] [data-mark]').count(), 0);
      assert.equal(await page.title(), "Wave", "no terminal sequence or markup of the server's took effect");
      await shot(page, "trust-10-settings-hidden-text");
      assert.deepEqual(errors, []);
    } finally {
      await closeAll(context, sidecar, sandbox);
    }
  });

  test("TRUST-9: in an untrusted workspace the row says so, Approve is disabled and the sidecar refuses it too; nothing runs", async () => {
    const sandbox = makeSandbox({ approved: false });
    const sidecar = await startSidecar(sandbox, { init: { workspaceTrusted: false } });
    const context = await ui.browser.newContext({ viewport: { width: 1100, height: 760 } });
    const page = await context.newPage();
    const relay = await attachRelay(page, sidecar);
    try {
      await page.goto(`${ui.web.url}?page=settings&lang=en`);
      await page.waitForSelector("body[data-ready=true]");
      await page.locator('button.source-tab[data-tab="project"]').click();
      const alpha = page.locator('li.server-row[data-server="alpha"][data-source="project"]');
      assert.equal(await alpha.getAttribute("data-status"), "needs-approval");
      assert.match(await alpha.locator(".approval-reason").textContent(), /the workspace is not trusted/);
      assert.equal(await alpha.locator("button[data-action=approve]").isDisabled(), true, "no Approve while untrusted");
      // The sidecar refuses it as well, whatever a page sends.
      const refused = await sidecar.connection
        .sendRequest("wave/mcp/approve", { name: "alpha" })
        .then(() => undefined, (e) => e);
      assert.equal(refused?.data?.kind, "untrusted");
      assert.equal(fs.existsSync(path.join(sandbox.root, "alpha.pid")), false);
      await shot(page, "trust-08-settings-untrusted");
      // Trusted now (the IDE's `wave/workspace/trust`): Approve works.
      sidecar.connection.sendNotification("wave/workspace/trust", { trusted: true });
      await until(async () => !/not trusted/.test((await alpha.locator(".approval-reason").textContent().catch(() => "")) ?? ""), "the reason changes");
      await alpha.locator("button[data-action=approve]").click();
      await until(async () => (await alpha.getAttribute("data-status")) === "connected", "alpha approved and connected");
    } finally {
      await closeAll(context, sidecar, sandbox);
    }
  });
});
