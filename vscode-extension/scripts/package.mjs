// Packages the extension as a .vsix with the sidecar binary inside (bin/wave-mcp).
// The binary: $WAVE_SIDECAR_BINARY, else the newer of ../target/release/wave-mcp and
// ../target/debug/wave-mcp. The .vsix is platform-specific (the binary is), so it is tagged with
// this machine's VS Code target (e.g. linux-x64).
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

const ext = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const repo = path.resolve(ext, "..");
const target = process.env.CARGO_TARGET_DIR ? path.resolve(process.env.CARGO_TARGET_DIR) : path.join(repo, "target");
const exe = process.platform === "win32" ? "wave-mcp.exe" : "wave-mcp";

function pickBinary() {
  if (process.env.WAVE_SIDECAR_BINARY) return process.env.WAVE_SIDECAR_BINARY;
  const found = ["release", "debug"]
    .map((p) => path.join(target, p, exe))
    .filter((p) => fs.existsSync(p))
    .sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs);
  if (found.length === 0) {
    console.error(`no sidecar binary: run \`cargo build --release --bin wave-mcp\` (looked in ${target}/{release,debug})`);
    process.exit(1);
  }
  return found[0];
}

const binary = pickBinary();
fs.mkdirSync(path.join(ext, "bin"), { recursive: true });
const dest = path.join(ext, "bin", exe);
fs.copyFileSync(binary, dest);
fs.chmodSync(dest, 0o755);
console.log(`bundled sidecar: ${binary} -> bin/${exe}`);

const arch = { x64: "x64", arm64: "arm64", arm: "armhf" }[process.arch] ?? process.arch;
const vsTarget = `${process.platform === "win32" ? "win32" : process.platform}-${arch}`;
const version = JSON.parse(fs.readFileSync(path.join(ext, "package.json"), "utf8")).version;
const out = process.env.WAVE_VSIX_OUT ?? path.join(ext, `wave-mcp-${version}.vsix`);
const vsce = path.join(ext, "node_modules", ".bin", process.platform === "win32" ? "vsce.cmd" : "vsce");
execFileSync(vsce, ["package", "--no-dependencies", "--allow-missing-repository", "--target", vsTarget, "--out", out], { cwd: ext, stdio: "inherit" });
console.log(`packaged ${out}`);
