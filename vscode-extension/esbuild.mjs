// Bundles the extension (Node, CommonJS, `vscode` external) and the shared webview (browser IIFE
// + CSS + the standalone index.html used by JetBrains JCEF and the Chromium tests).
import * as esbuild from "esbuild";
import { copyFileSync, mkdirSync } from "node:fs";

const watch = process.argv.includes("--watch");
const production = process.argv.includes("--production");

const extension = {
  entryPoints: ["src/extension.ts"],
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  outfile: "dist/extension.js",
  external: ["vscode"],
  sourcemap: !production,
  minify: production,
  logLevel: "info",
};

const webview = {
  entryPoints: { webview: "webview/src/main.ts" },
  bundle: true,
  platform: "browser",
  format: "iife",
  target: "chrome110",
  outdir: "dist/webview",
  entryNames: "[name]",
  sourcemap: false,
  minify: production,
  logLevel: "info",
};

function copyStatic() {
  mkdirSync("dist/webview", { recursive: true });
  copyFileSync("webview/index.html", "dist/webview/index.html");
}

if (watch) {
  const a = await esbuild.context(extension);
  const b = await esbuild.context(webview);
  copyStatic();
  await Promise.all([a.watch(), b.watch()]);
} else {
  await Promise.all([esbuild.build(extension), esbuild.build(webview)]);
  copyStatic();
}
