// MCP Apps in the chat page (APPS-2, APPS-3) against the REAL sidecar and the official example
// server `@modelcontextprotocol/server-basic-vanillajs` (from $WAVE_PEERS_DIR/apps, filled by
// scripts/install-peers.sh): a turn calls its UI tool `get-time`; the app appears under the
// call, framed from the sidecar's sandbox origin (not the page's), and shows the tool's result
// inside the nested iframe; the chat reopened shows it again from the history without calling
// the tool (APPS-5); the app's ui/message fills the input, its ui/open-link goes to the host's
// confirmed opener (APPS-4). APPS-2 (the four render): the other three official examples,
// `server-system-monitor`, `server-budget-allocator` and `server-pdf` (a one-page PDF the test
// writes, offline), each shows its own content in the inner frame (screenshots 44-app-*.png).

import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, test } from "node:test";
import { closeAll, makeSandbox, openChatPage, outputDir, startFakeModel, startSidecar, until, useBrowser, writeProject } from "./support.mjs";

const peers = process.env.WAVE_PEERS_DIR ?? path.join(os.homedir(), ".cache", "wave-mcp-peers");
const appsBin = path.join(peers, "apps", "node_modules", ".bin");
const basicServer = path.join(appsBin, "mcp-server-basic-vanillajs");

/** A one-page PDF (Helvetica, `text`), for the pdf server: offline, no fixture file needed. */
function tinyPdf(text) {
  const stream = `BT /F1 18 Tf 30 100 Td (${text}) Tj ET`;
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 200] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
    `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
  ];
  let out = "%PDF-1.4\n";
  const offsets = objects.map((body, i) => {
    const at = out.length;
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
    return at;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const at of offsets) out += `${String(at).padStart(10, "0")} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return out;
}

/** Text of the first element matching `selector` in any frame of the page ("" if none). */
async function textInFrames(page, selector) {
  for (const f of page.frames()) {
    const text = await f.locator(selector).first().textContent({ timeout: 200 }).catch(() => null);
    if (text) return text.trim();
  }
  return "";
}

/**
 * The other three official example servers (APPS-2: the four render). Each: the server's
 * command (in $WAVE_PEERS_DIR/apps), its UI tool and arguments, and what the app shows of
 * the tool's result inside the inner frame once it has rendered.
 */
const examples = [
  {
    name: "sysmon",
    bin: "mcp-system-monitor-server",
    tool: "get-system-info",
    resource: "ui://system-monitor/mcp-app.html",
    args: () => ({}),
    shown: async (page) => {
      const host = await textInFrames(page, "#info-hostname");
      return host === os.hostname() && (await textInFrames(page, "#memory-percent")) !== "--%";
    },
    what: "the system monitor shows this machine's hostname and memory",
  },
  {
    name: "budget",
    bin: "mcp-budget-allocator-server",
    tool: "get-budget-data",
    resource: "ui://budget-allocator/mcp-app.html",
    args: () => ({}),
    shown: async (page) => {
      const status = await textInFrames(page, "#status-bar");
      return /Allocated: \$[\d,]+ \/ \$[1-9]/.test(status) && (await textInFrames(page, "#sliders-container")) !== "";
    },
    what: "the budget allocator shows a total budget and its category sliders",
  },
  {
    name: "pdf",
    bin: "mcp-pdf-server",
    tool: "display_pdf",
    resource: "ui://pdf-viewer/mcp-app.html",
    setup: (sandbox) => {
      const file = path.join(sandbox.workdir, "wave-fixture.pdf");
      fs.writeFileSync(file, tinyPdf("Wave PDF fixture"));
      return [file];
    },
    args: (sandbox) => ({ url: path.join(sandbox.workdir, "wave-fixture.pdf") }),
    shown: async (page) => (await textInFrames(page, ".text-layer")).includes("Wave PDF fixture"),
    what: "the pdf viewer shows the fixture's page text",
    // The viewer calls ui/update-model-context without looking at the host's capabilities (we
    // declare none: this host does not add an app's context to the model) and without awaiting
    // it, so the refusal is an unhandled rejection in the app's own frame: the app's, not ours.
    appErrors: /^ProtocolError: the host does not support "ui\/update-model-context"$/,
  },
];

const ui = useBrowser();

describe("MCP Apps in the chat page (official example server)", { skip: !fs.existsSync(basicServer) && `no ${basicServer} (scripts/install-peers.sh)` }, () => {
  test("APPS-2, APPS-3, APPS-5, APPS-4: a turn calling get-time shows the basic app under the call, on the sandbox origin, with the tool's result; reopened, the chat shows it again without a call; its message goes to the input, its link to the host", async () => {
    const sandbox = makeSandbox({ empty: true });
    writeProject(sandbox, { basic: { command: basicServer, args: ["--stdio"] } });
    fs.writeFileSync(path.join(sandbox.home, ".wave", "settings.json"), JSON.stringify({ permissions: { defaultMode: "allow" } }));
    const model = await startFakeModel((request, n) => {
      if (n > 1) return { say: "the time is shown above" };
      const tool = (request.tools ?? []).map((t) => t.function.name).find((name) => name.endsWith("get-time"));
      return tool ? { call: tool, arguments: {} } : { say: "no get-time tool was offered" };
    });
    const sidecar = await startSidecar(sandbox, { env: { WAVE_BASE_URL: model.baseUrl, WAVE_MODEL: "fake" }, init: { apps: true } });
    const { context, page, errors, relay } = await openChatPage(ui, sidecar, { width: 900, height: 900 });
    const consoleLines = [];
    page.on("console", (m) => consoleLines.push(`${m.type()}: ${m.text()}`));
    try {
      await page.locator("#chat-input").fill("what time is it?");
      await page.locator("#chat-send").click();
      const view = page.locator(".app-view[data-server=basic]");
      await view.waitFor({ timeout: 60_000 });
      assert.equal(await view.getAttribute("data-resource"), "ui://get-time/mcp-app.html");
      const frame = view.locator("iframe.app-frame");
      await until(async () => ((await frame.getAttribute("src")) ?? "").startsWith("http://127.0.0.1:"), "the proxy page is framed", 60_000);
      const src = new URL(await frame.getAttribute("src"));
      assert.notEqual(src.origin, new URL(page.url()).origin, "the app's origin is not the page's");

      // The app itself runs in the proxy's inner iframe; its #server-time shows the result.
      let shown = "";
      await until(
        async () => {
          for (const f of page.frames()) {
            const text = await f.locator("#server-time").textContent({ timeout: 200 }).catch(() => null);
            if (text) shown = text;
          }
          return shown !== "" && shown !== "Loading...";
        },
        "the app shows the server's time",
        60_000,
      );
      const toolMessage = relay.pushes.find((p) => p.method === "wave/session/message" && p.params.message.role === "tool");
      assert.ok(toolMessage?.params.message.app?.result, "the tool message carries the full result (APPS-5)");
      const appFrame = page.frames().find((f) => f.parentFrame()?.url().startsWith(src.origin));
      assert.ok(appFrame, "the app runs inside the proxy page's iframe");
      await page.screenshot({ path: path.join(outputDir, "40-app-basic-get-time.png"), fullPage: true });
      assert.ok(
        relay.sidecarLog.some((e) => e.method === "wave/app/resource" && e.result?.sandboxUrl),
        "the page asked the sidecar for the app",
      );
      assert.deepEqual(errors, [], "no script errors in the page");
      console.log(`app shows: ${shown}`);

      // APPS-5: the chat reopened (the page loaded again) shows the app again from
      // wave/session/history, with the same result: the time it shows is the first call's, so
      // the tool was not called again (get-time answers the current time).
      const sends = () => relay.sidecarLog.filter((e) => e.method === "wave/app/callTool" || e.method === "wave/session/send").length;
      const sentBefore = sends();
      await page.reload();
      await page.waitForSelector("body[data-ready=true]");
      await page.locator(".app-view[data-server=basic]").waitFor({ timeout: 60_000 });
      let again = "";
      await until(
        async () => {
          for (const f of page.frames()) {
            const text = await f.locator("#server-time").textContent({ timeout: 200 }).catch(() => null);
            if (text && text !== "Loading...") again = text;
          }
          return again !== "";
        },
        "the reopened chat shows the app again",
        60_000,
      );
      assert.equal(again, shown, "the reopened app shows the first call's result");
      assert.equal(sends(), sentBefore, "reopening called nothing");
      assert.ok(
        relay.sidecarLog.some((e) => e.method === "wave/session/history"),
        "the reopened page read the history",
      );
      await page.screenshot({ path: path.join(outputDir, "40-app-basic-reopened.png"), fullPage: true });

      // APPS-4: the app's ui/message goes into the chat's input for the user to send, never to
      // the model on its own; its ui/open-link goes to the host, which opens it only after the
      // user confirms (host/openExternal, as the answer's links).
      const app = page.frames().find((f) => f.url() === "about:srcdoc");
      assert.ok(app, "the app's frame");
      await app.locator("button", { hasText: "Send Message" }).click();
      await until(async () => (await page.locator("#chat-input").inputValue()) === "This is message text.", "the app's message in the chat input");
      assert.equal(sends(), sentBefore, "the app's message was not sent by itself");
      await app.locator("button", { hasText: "Open Link" }).click();
      await until(
        async () => relay.hostLog.some((e) => e.method === "host/openExternal" && e.params?.url === "https://modelcontextprotocol.io/"),
        "the app's link handed to the host",
      );
    } catch (e) {
      await page.screenshot({ path: path.join(outputDir, "40-app-basic-get-time-failed.png"), fullPage: true }).catch(() => undefined);
      console.log(`frames: ${page.frames().map((f) => f.url()).join(" | ")}`);
      console.log(`console:\n${consoleLines.join("\n")}`);
      console.log(`app requests: ${JSON.stringify(relay.sidecarLog.filter((e) => e.method.startsWith("wave/app/")).map((e) => [e.method, e.error ?? Object.keys(e.result ?? {})]))}`);
      throw e;
    } finally {
      await closeAll(context, sidecar, sandbox);
      await model.close();
    }
  });
  test("APPS-4, TRUST-5: the app's own tools/call asks like the model's: declined, it is refused; allowed once, the app shows the new time", async () => {
    const sandbox = makeSandbox({ empty: true });
    writeProject(sandbox, { basic: { command: basicServer, args: ["--stdio"] } });
    // No settings: `defaultMode` is `ask`, for the model's calls and the app's alike.
    const model = await startFakeModel((request, n) => {
      if (n > 1) return { say: "done" };
      const tool = (request.tools ?? []).map((t) => t.function.name).find((name) => name.endsWith("get-time"));
      return tool ? { call: tool, arguments: {} } : { say: "no get-time tool was offered" };
    });
    const sidecar = await startSidecar(sandbox, { env: { WAVE_BASE_URL: model.baseUrl, WAVE_MODEL: "fake" }, init: { apps: true } });
    const { context, page, errors, relay } = await openChatPage(ui, sidecar, { width: 900, height: 1000 });
    const appTime = async () => {
      for (const f of page.frames()) {
        const text = await f.locator("#server-time").textContent({ timeout: 200 }).catch(() => null);
        if (text && text !== "Loading...") return text;
      }
      return "";
    };
    const appFrame = () => page.frames().find((f) => f.url() === "about:srcdoc");
    try {
      await page.locator("#chat-input").fill("what time is it?");
      await page.locator("#chat-send").click();
      // The model's call asks first.
      const modelCard = page.locator('.consent-confirm[data-tool="mcp__basic__get-time"]');
      await modelCard.waitFor({ timeout: 60_000 });
      const callId = await modelCard.getAttribute("data-tool-call");
      await modelCard.locator('button[data-decision="once"]').click();
      let first = "";
      await until(async () => (first = await appTime()) !== "", "the app shows the model's result", 60_000);

      // The app's own call of the same tool asks too (the same funnel), naming the model's call.
      await appFrame().locator("#get-time-btn").click();
      const appCard = page.locator('.consent-confirm[data-tool="mcp__basic__get-time"]');
      await appCard.waitFor({ timeout: 30_000 });
      assert.equal(await appCard.getAttribute("data-tool-call"), callId);
      await page.screenshot({ path: path.join(outputDir, "41-app-call-asks.png"), fullPage: true });
      await appCard.locator('button[data-decision="deny"]').click();
      await until(
        async () => relay.sidecarLog.some((e) => e.method === "wave/app/callTool" && e.error),
        "the declined app call is refused",
        30_000,
      );
      const refused = relay.sidecarLog.find((e) => e.method === "wave/app/callTool" && e.error);
      assert.equal(refused.error.data?.kind, "appRefused");
      assert.match(refused.error.message, /declined/);
      // The app got an error, never a new time: the server was not called.
      await until(async () => (await appTime()) === "[ERROR]", "the app shows the refusal", 30_000);
      await page.screenshot({ path: path.join(outputDir, "42-app-call-declined.png"), fullPage: true });

      // Allowed once: the server is called and the app shows its answer.
      await appFrame().locator("#get-time-btn").click();
      await appCard.waitFor({ timeout: 30_000 });
      await appCard.locator('button[data-decision="once"]').click();
      await until(
        async () => relay.sidecarLog.some((e) => e.method === "wave/app/callTool" && e.result),
        "the allowed app call answers",
        30_000,
      );
      await until(async () => /^\d{4}-/.test(await appTime()) && (await appTime()) !== first, "the app shows the new time", 30_000);
      await page.screenshot({ path: path.join(outputDir, "43-app-call-allowed.png"), fullPage: true });
      assert.deepEqual(errors, [], "no script errors in the page");
    } finally {
      await closeAll(context, sidecar, sandbox);
      await model.close();
    }
  });
  for (const example of examples) {
    const serverBin = path.join(appsBin, example.bin);
    test(
      `APPS-2: a turn calling ${example.tool} shows the ${example.name} example app on the sandbox origin`,
      { skip: !fs.existsSync(serverBin) && `no ${serverBin} (scripts/install-peers.sh)` },
      async () => {
        const sandbox = makeSandbox({ empty: true });
        const extraArgs = example.setup?.(sandbox) ?? [];
        writeProject(sandbox, { [example.name]: { command: serverBin, args: ["--stdio", ...extraArgs] } });
        fs.writeFileSync(path.join(sandbox.home, ".wave", "settings.json"), JSON.stringify({ permissions: { defaultMode: "allow" } }));
        const model = await startFakeModel((request, n) => {
          if (n > 1) return { say: `the ${example.name} app is shown above` };
          const tool = (request.tools ?? []).map((t) => t.function.name).find((name) => name === `mcp__${example.name}__${example.tool}`);
          return tool ? { call: tool, arguments: example.args(sandbox) } : { say: `no ${example.tool} tool was offered` };
        });
        const sidecar = await startSidecar(sandbox, { env: { WAVE_BASE_URL: model.baseUrl, WAVE_MODEL: "fake" }, init: { apps: true } });
        const { context, page, errors, relay } = await openChatPage(ui, sidecar, { width: 900, height: 1000 });
        const consoleLines = [];
        page.on("console", (m) => consoleLines.push(`${m.type()}: ${m.text()}`));
        const shot = `44-app-${example.name}`;
        try {
          await page.locator("#chat-input").fill(`show me the ${example.name} app`);
          await page.locator("#chat-send").click();
          const view = page.locator(`.app-view[data-server=${example.name}]`);
          await view.waitFor({ timeout: 60_000 });
          assert.equal(await view.getAttribute("data-resource"), example.resource);
          const frame = view.locator("iframe.app-frame");
          await until(async () => ((await frame.getAttribute("src")) ?? "").startsWith("http://127.0.0.1:"), "the proxy page is framed", 60_000);
          const src = new URL(await frame.getAttribute("src"));
          assert.notEqual(src.origin, new URL(page.url()).origin, "the app's origin is not the page's");
          await until(() => example.shown(page), example.what, 90_000);
          const appFrame = page.frames().find((f) => f.parentFrame()?.url().startsWith(src.origin));
          assert.ok(appFrame, "the app runs inside the proxy page's iframe");
          await page.screenshot({ path: path.join(outputDir, `${shot}.png`), fullPage: true });
          const ours = errors.filter((e) => !example.appErrors?.test(e));
          assert.deepEqual(ours, [], "no script errors in the page");
        } catch (e) {
          await page.screenshot({ path: path.join(outputDir, `${shot}-failed.png`), fullPage: true }).catch(() => undefined);
          console.log(`frames: ${page.frames().map((f) => f.url().slice(0, 120)).join(" | ")}`);
          console.log(`console:\n${consoleLines.join("\n")}`);
          console.log(`app requests: ${JSON.stringify(relay.sidecarLog.filter((e) => e.method.startsWith("wave/app/")).map((e) => [e.method, e.error ?? Object.keys(e.result ?? {})]))}`);
          throw e;
        } finally {
          await closeAll(context, sidecar, sandbox);
          await model.close();
        }
      },
    );
  }
});
