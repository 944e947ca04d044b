#!/usr/bin/env bash
# Installs what the tests need and runs every test group. `.ci/run` calls exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== toolchain"
cargo --version
if ! cargo nextest --version >/dev/null 2>&1; then
  echo "cargo-nextest not found: installing it from crates.io"
  cargo install --locked cargo-nextest
fi

echo "== build"
cargo build --workspace --all-targets --locked

echo "== format and lints"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings

echo "== tests (unit + integration, real MCP server processes; third-party peers run below)"
cargo nextest run --workspace --locked --no-fail-fast -E 'not test(/suite::peers::/)'

echo "== third-party MCP peers (npm server-everything, PyPI mcp, uvx mcp-server-time)"
export WAVE_PEERS_DIR="${WAVE_PEERS_DIR:-$HOME/.cache/wave-mcp-peers}"
bash scripts/install-peers.sh
cargo nextest run --workspace --locked --no-fail-fast -E 'test(/suite::peers::/)'

echo "== no MCP test server left running"
if pgrep -f wave-mcp-test-server >/dev/null; then
  pgrep -af wave-mcp-test-server
  echo "error: test servers outlived the tests" >&2
  exit 1
fi
if pgrep -f "$WAVE_PEERS_DIR/|tests/peers/py_server.py" >/dev/null; then
  pgrep -af "$WAVE_PEERS_DIR/|tests/peers/py_server.py"
  echo "error: third-party MCP peers outlived the tests" >&2
  exit 1
fi
