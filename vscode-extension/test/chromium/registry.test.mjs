// USE-3: the settings page's "Browse registry" in headless Chromium against the REAL sidecar
// (`wave-mcp lsp` with WAVE_REGISTRY_URL) and a local MCP Registry on 127.0.0.1 (our test
// server's `--registry` mode serving recorded real server.json documents): search as you type,
// details with the package or remote and the values it needs, Add to project and to user.

import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import { attachRelay, closeAll, makeSandbox, outputDir, startRegistry, startSidecar, until, useBrowser } from "./support.mjs";

const ui = useBrowser();
const shot = (page, name) => page.screenshot({ path: path.join(outputDir, `${name}.png`), fullPage: true });
const resultNames = (page) => page.locator("li.registry-result").evaluateAll((els) => els.map((e) => e.dataset.name));

describe("Browse registry against the real sidecar and a local registry", () => {
  let registry;
  let sandbox;
  let sidecar;
  let context;
  let page;
  let relay;
  const errors = [];

  before(async () => {
    registry = await startRegistry();
    sandbox = makeSandbox();
    sidecar = await startSidecar(sandbox, { env: { WAVE_REGISTRY_URL: registry.base } });
    context = await ui.browser.newContext({ viewport: { width: 1200, height: 820 } });
    page = await context.newPage();
    page.on("pageerror", (e) => errors.push(String(e)));
    page.on("console", (m) => {
      if (m.type() === "error") errors.push(m.text());
    });
    relay = await attachRelay(page, sidecar);
    await page.goto(`${ui.web.url}?page=settings&lang=en`);
    await page.waitForSelector("body[data-ready=true]");
    await page.waitForSelector("li.server-row");
  });

  after(async () => {
    await closeAll(context, sidecar, registry, sandbox);
    assert.deepEqual(errors, [], "no script or CSP errors in the page");
  });

  test("USE-3: search as you type, details, Add to project (one new entry, approved) and to user", async () => {
    const projectFile = path.join(sandbox.workdir, ".mcp.json");
    const projectBefore = fs.readFileSync(projectFile, "utf8");

    await page.locator("button[data-action=browse-registry]").first().click();
    await page.waitForSelector("#registry-browser");
    // Opening lists the registry's servers (the latest version of each).
    await until(async () => (await resultNames(page)).length === 7, "the first page of servers");
    assert.match(await page.locator(".registry-from").textContent(), new RegExp(`From ${registry.base}`));
    assert.equal(
      await page.locator('li.registry-result[data-name="io.example/bundle-only"] .registry-install').textContent(),
      "cannot be installed by wave-mcp",
    );
    assert.equal(
      await page.locator('li.registry-result[data-name="io.github.domdomegg/time-mcp-nuget"] .registry-install').textContent(),
      "NuGet package TimeMcpServer@1.0.8",
    );

    // Typing narrows the list without pressing Enter; the search box keeps focus.
    await page.locator("#registry-query").pressSequentially("airt", { delay: 40 });
    await until(
      async () => JSON.stringify(await resultNames(page)) === JSON.stringify(["io.github.domdomegg/airtable-mcp-server"]),
      "the results for airt",
    );
    assert.equal(await page.evaluate(() => globalThis.document.activeElement?.id), "registry-query");
    assert.ok((await registry.searches()).includes("airt"), "the registry was asked for the typed term");
    assert.ok(
      relay.sidecarLog.some((r) => r.method === "wave/registry/search" && r.params.query === "airt"),
      "the page asked the sidecar",
    );

    await page.locator('li.registry-result[data-name="io.github.domdomegg/airtable-mcp-server"] button').click();
    await page.waitForSelector(".registry-how");
    assert.equal(await page.locator(".registry-how").textContent(), "Runs as npm package airtable-mcp-server@1.7.3");
    const entry = JSON.parse(await page.locator("pre.registry-entry").textContent());
    assert.deepEqual(entry, {
      command: "npx",
      args: ["-y", "airtable-mcp-server@1.7.3"],
      env: { AIRTABLE_API_KEY: "${AIRTABLE_API_KEY}" },
    });
    const needed = await page.locator('.registry-needs li[data-placeholder="AIRTABLE_API_KEY"]').textContent();
    assert.match(needed, /^\$\{AIRTABLE_API_KEY\} environment variable AIRTABLE_API_KEY, secret: Airtable personal access token/);
    assert.equal(await page.locator("#registry-entry-name").inputValue(), "airtable-mcp-server");
    await shot(page, "registry-01-details");

    await page.locator("#registry-entry-name").fill("airtable");
    await page.locator("button[data-add-registry=project]").click();
    await page.waitForSelector(".registry-added");
    assert.equal(
      await page.locator(".registry-added").textContent(),
      `Added "airtable" to ${projectFile}. Set AIRTABLE_API_KEY before it starts.`,
    );
    // One new entry at the end of mcpServers; every byte before it is as it was.
    const projectAfter = fs.readFileSync(projectFile, "utf8");
    const cut = projectBefore.lastIndexOf("}", projectBefore.lastIndexOf("}") - 1);
    assert.ok(projectAfter.startsWith(projectBefore.slice(0, cut).trimEnd()), projectAfter);
    assert.deepEqual(JSON.parse(projectAfter).mcpServers.airtable, entry);
    await shot(page, "registry-02-added");

    // A remote with a required header, to the user file.
    await page.locator("#registry-query").fill("");
    await page.locator("#registry-query").pressSequentially("apify", { delay: 40 });
    await until(
      async () => JSON.stringify(await resultNames(page)) === JSON.stringify(["com.apify/apify-mcp-server"]),
      "the results for apify",
    );
    await page.locator('li.registry-result[data-name="com.apify/apify-mcp-server"] button').click();
    await page.waitForSelector(".registry-how");
    assert.equal(await page.locator(".registry-how").textContent(), "Runs as remote server https://mcp.apify.com/ (Streamable HTTP)");
    assert.match(
      await page.locator('.registry-needs li[data-placeholder="AUTHORIZATION"]').textContent(),
      /^\$\{AUTHORIZATION\} header Authorization, secret: Apify API token/,
    );
    await page.locator("button[data-add-registry=user]").click();
    await page.waitForSelector(".registry-added");
    const userFile = path.join(sandbox.home, ".wave", "mcp.json");
    assert.deepEqual(JSON.parse(fs.readFileSync(userFile, "utf8")).mcpServers["apify-mcp-server"], {
      type: "http",
      url: "https://mcp.apify.com/",
      headers: { Authorization: "${AUTHORIZATION}" },
    });

    // The same name again: the sidecar's error, in words, in the dialog; nothing written.
    await page.locator("button[data-add-registry=user]").click();
    await page.waitForSelector(".registry-add-error");
    assert.match(await page.locator(".registry-add-error").textContent(), /already has a server named "apify-mcp-server"/);

    // A server wave-mcp cannot install says why and offers no Add.
    await page.locator("#registry-query").fill("");
    await page.locator("#registry-query").pressSequentially("bundle", { delay: 40 });
    await until(
      async () => JSON.stringify(await resultNames(page)) === JSON.stringify(["io.example/bundle-only"]),
      "the results for bundle",
    );
    await page.locator('li.registry-result[data-name="io.example/bundle-only"] button').click();
    await page.waitForSelector(".registry-unsupported");
    assert.match(await page.locator(".registry-unsupported").textContent(), /offers only a mcpb package/);
    assert.equal(await page.locator("button[data-add-registry]").count(), 0);

    // Closed, the list shows the added servers: the project one approved as added (TRUST-1).
    await page.locator("button.registry-close").click();
    await page.locator('button.source-tab[data-tab="project"]').click();
    const row = page.locator('li.server-row[data-server="airtable"]');
    await until(async () => (await row.count()) === 1, "the airtable row");
    assert.equal(await row.getAttribute("data-status"), "disconnected");
    await page.locator('button.source-tab[data-tab="user"]').click();
    await until(async () => (await page.locator('li.server-row[data-server="apify-mcp-server"]').count()) === 1, "the apify row");
    await shot(page, "registry-03-rows");
  });
});
