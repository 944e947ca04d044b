#!/usr/bin/env bash
# Installs the third-party MCP servers the `suite::peers` test group talks to, from the package
# registries, into a cache directory outside the repository:
#
#   $WAVE_PEERS_DIR (default ~/.cache/wave-mcp-peers)
#     npm/        npm @modelcontextprotocol/server-everything (node_modules/.bin/mcp-server-everything)
#                 and @modelcontextprotocol/server-filesystem (.bin/mcp-server-filesystem: roots)
#     sdk/        npm @modelcontextprotocol/sdk with express: its example servers, among them
#                 simpleStreamableHttp.js --oauth (an MCP server with its own authorization server);
#                 tests/peers/ts_tasks.mjs runs on it (2025-11-25 tasks, SRV-5)
#     apps/       npm @modelcontextprotocol/server-basic-vanillajs, server-system-monitor,
#                 server-budget-allocator and server-pdf: the four official MCP Apps example servers
#                 of the Chromium and code-server apps tests (APPS-2); offline once installed
#     sdk2/       npm @modelcontextprotocol/server (TypeScript SDK v2, MCP 2026-07-28): the era
#                 tests run tests/peers/ts2_server.mjs with it (2026-only, dual-era)
#     venv/       a Python venv with PyPI `mcp` (2.x) and PyPI `uv` (venv/bin/uv, venv/bin/uvx)
#     tasks-venv/ a Python venv of its own with PyPI `fastmcp-tasks` (it pins an older fastmcp than
#                 other peers want): tests/peers/py_tasks.py, task-only tools (SRV-5)
#     fastmcp-venv/ a Python venv of its own with PyPI `fastmcp` 4.1.6 (fastmcp-tasks above holds
#                 an older fastmcp): tests/peers/py_fastmcp.py, the era tests (SPEC-1)
#     uv-cache/   uv's cache, holding `uvx mcp-server-time` so tests can run it with UV_OFFLINE=1
#     mcp-server-time.spec   the pinned `mcp-server-time==VERSION` the tests run with uvx
#
# Idempotent: a component whose pinned version is already installed is not touched again.
# Needs only node/npm and python3 (with venv and pip). Exits non-zero naming what failed.
set -euo pipefail

EVERYTHING_VERSION=2026.8.31
FILESYSTEM_VERSION=2026.8.31
MCP_VERSION=2.3.0
UV_VERSION=0.13.9
TIME_VERSION=2026.10.19
SDK_VERSION=1.32.2
EXPRESS_VERSION=5.3.0
SDK2_VERSION=2.4.0
FASTMCP_TASKS_VERSION=4.1.4
FASTMCP_VERSION=4.1.6

PEERS="${WAVE_PEERS_DIR:-$HOME/.cache/wave-mcp-peers}"
mkdir -p "$PEERS"
PEERS="$(cd "$PEERS" && pwd)"

fail() {
  echo "install-peers: error: $*" >&2
  exit 1
}

for tool in node npm python3; do
  command -v "$tool" >/dev/null 2>&1 || fail "'$tool' is not on PATH; it is needed to install the MCP test peers"
done

# --- npm: @modelcontextprotocol/server-everything -------------------------------------------
NPM_DIR="$PEERS/npm"
EVERYTHING_PKG="$NPM_DIR/node_modules/@modelcontextprotocol/server-everything/package.json"
installed_everything() {
  [ -f "$EVERYTHING_PKG" ] && [ -x "$NPM_DIR/node_modules/.bin/mcp-server-everything" ] &&
    node -e 'process.stdout.write(require(process.argv[1]).version)' "$EVERYTHING_PKG" 2>/dev/null
}
if [ "$(installed_everything || true)" != "$EVERYTHING_VERSION" ]; then
  echo "installing npm @modelcontextprotocol/server-everything@$EVERYTHING_VERSION into $NPM_DIR"
  mkdir -p "$NPM_DIR"
  npm install --prefix "$NPM_DIR" --no-audit --no-fund --loglevel=error \
    "@modelcontextprotocol/server-everything@$EVERYTHING_VERSION" >&2 ||
    fail "npm install of @modelcontextprotocol/server-everything@$EVERYTHING_VERSION failed"
  [ "$(installed_everything || true)" = "$EVERYTHING_VERSION" ] ||
    fail "server-everything is not usable in $NPM_DIR after npm install"
fi

# --- npm: @modelcontextprotocol/server-filesystem (started without directories: the roots) ---
FILESYSTEM_PKG="$NPM_DIR/node_modules/@modelcontextprotocol/server-filesystem/package.json"
installed_filesystem() {
  [ -f "$FILESYSTEM_PKG" ] && [ -x "$NPM_DIR/node_modules/.bin/mcp-server-filesystem" ] &&
    node -e 'process.stdout.write(require(process.argv[1]).version)' "$FILESYSTEM_PKG" 2>/dev/null
}
if [ "$(installed_filesystem || true)" != "$FILESYSTEM_VERSION" ]; then
  echo "installing npm @modelcontextprotocol/server-filesystem@$FILESYSTEM_VERSION into $NPM_DIR"
  npm install --prefix "$NPM_DIR" --no-audit --no-fund --loglevel=error \
    "@modelcontextprotocol/server-filesystem@$FILESYSTEM_VERSION" >&2 ||
    fail "npm install of @modelcontextprotocol/server-filesystem@$FILESYSTEM_VERSION failed"
  [ "$(installed_filesystem || true)" = "$FILESYSTEM_VERSION" ] ||
    fail "server-filesystem is not usable in $NPM_DIR after npm install"
fi

# --- npm: @modelcontextprotocol/sdk (example servers: OAuth sign-in, progress, elicitation) ---
SDK_DIR="$PEERS/sdk"
SDK_PKG="$SDK_DIR/node_modules/@modelcontextprotocol/sdk/package.json"
installed_sdk() {
  [ -f "$SDK_PKG" ] && [ -f "$SDK_DIR/node_modules/express/package.json" ] &&
    node -e 'process.stdout.write(require(process.argv[1]).version)' "$SDK_PKG" 2>/dev/null
}
if [ "$(installed_sdk || true)" != "$SDK_VERSION" ]; then
  echo "installing npm @modelcontextprotocol/sdk@$SDK_VERSION and express@$EXPRESS_VERSION into $SDK_DIR"
  mkdir -p "$SDK_DIR"
  npm install --prefix "$SDK_DIR" --no-audit --no-fund --loglevel=error \
    "@modelcontextprotocol/sdk@$SDK_VERSION" "express@$EXPRESS_VERSION" >&2 ||
    fail "npm install of @modelcontextprotocol/sdk@$SDK_VERSION failed"
  [ "$(installed_sdk || true)" = "$SDK_VERSION" ] ||
    fail "the MCP TypeScript SDK is not usable in $SDK_DIR after npm install"
fi

# --- npm: @modelcontextprotocol/server (TypeScript SDK v2, MCP 2026-07-28) ------------------
SDK2_DIR="$PEERS/sdk2"
SDK2_PKG="$SDK2_DIR/node_modules/@modelcontextprotocol/server/package.json"
installed_sdk2() {
  [ -f "$SDK2_PKG" ] &&
    node -e 'process.stdout.write(require(process.argv[1]).version)' "$SDK2_PKG" 2>/dev/null
}
if [ "$(installed_sdk2 || true)" != "$SDK2_VERSION" ]; then
  echo "installing npm @modelcontextprotocol/server@$SDK2_VERSION into $SDK2_DIR"
  mkdir -p "$SDK2_DIR"
  npm install --prefix "$SDK2_DIR" --no-audit --no-fund --loglevel=error \
    "@modelcontextprotocol/server@$SDK2_VERSION" >&2 ||
    fail "npm install of @modelcontextprotocol/server@$SDK2_VERSION failed"
  [ "$(installed_sdk2 || true)" = "$SDK2_VERSION" ] ||
    fail "the MCP TypeScript SDK v2 is not usable in $SDK2_DIR after npm install"
fi

# --- npm: the official MCP Apps example servers (APPS-2) -------------------------------------
APPS_DIR="$PEERS/apps"
APPS_PACKAGES=(
  "server-basic-vanillajs@2.0.3"
  "server-system-monitor@2.0.3"
  "server-budget-allocator@2.0.3"
  "server-pdf@2.0.4"
)
installed_app() { # NAME -> its installed version
  local pkg="$APPS_DIR/node_modules/@modelcontextprotocol/$1/package.json"
  [ -f "$pkg" ] && node -e 'process.stdout.write(require(process.argv[1]).version)' "$pkg" 2>/dev/null
}
apps_missing=()
for spec in "${APPS_PACKAGES[@]}"; do
  [ "$(installed_app "${spec%@*}" || true)" = "${spec#*@}" ] || apps_missing+=("@modelcontextprotocol/$spec")
done
if [ "${#apps_missing[@]}" -gt 0 ]; then
  echo "installing npm ${apps_missing[*]} into $APPS_DIR"
  mkdir -p "$APPS_DIR"
  npm install --prefix "$APPS_DIR" --no-audit --no-fund --loglevel=error "${apps_missing[@]}" >&2 ||
    fail "npm install of ${apps_missing[*]} failed"
  for spec in "${APPS_PACKAGES[@]}"; do
    [ "$(installed_app "${spec%@*}" || true)" = "${spec#*@}" ] ||
      fail "@modelcontextprotocol/${spec%@*} ${spec#*@} is not usable in $APPS_DIR after npm install"
  done
fi

# --- PyPI: mcp and uv in a venv -------------------------------------------------------------
VENV="$PEERS/venv"
installed_python() {
  [ -x "$VENV/bin/python" ] && [ -x "$VENV/bin/uvx" ] &&
    "$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("mcp"), m.version("uv"))' 2>/dev/null
}
if [ "$(installed_python || true)" != "$MCP_VERSION $UV_VERSION" ]; then
  echo "installing PyPI mcp==$MCP_VERSION and uv==$UV_VERSION into the venv $VENV"
  if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV" || fail "python3 -m venv $VENV failed (is the venv module installed?)"
  fi
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
    "mcp==$MCP_VERSION" "uv==$UV_VERSION" >&2 ||
    fail "pip install of mcp==$MCP_VERSION uv==$UV_VERSION failed"
  [ "$(installed_python || true)" = "$MCP_VERSION $UV_VERSION" ] &&
    "$VENV/bin/python" -c 'from mcp.server.mcpserver import MCPServer' ||
    fail "mcp/uv are not usable in $VENV after pip install"
fi

# --- uvx mcp-server-time, pre-fetched into uv's cache ---------------------------------------
# The tests run `uvx mcp-server-time==$TIME_VERSION` with the same environment plus UV_OFFLINE=1.
export UV_CACHE_DIR="$PEERS/uv-cache"
export UV_PYTHON="$VENV/bin/python"
export UV_PYTHON_DOWNLOADS=never
export UV_NO_CONFIG=1
TIME_SPEC="mcp-server-time==$TIME_VERSION"
if ! UV_OFFLINE=1 "$VENV/bin/uvx" "$TIME_SPEC" --help >/dev/null 2>&1; then
  echo "fetching uvx $TIME_SPEC into $UV_CACHE_DIR"
  "$VENV/bin/uvx" "$TIME_SPEC" --help >/dev/null ||
    fail "uvx $TIME_SPEC failed (uv could not fetch it from PyPI)"
  UV_OFFLINE=1 "$VENV/bin/uvx" "$TIME_SPEC" --help >/dev/null ||
    fail "uvx $TIME_SPEC does not run offline from $UV_CACHE_DIR after fetching it"
fi
# The tests read which version to run from here.
echo "$TIME_SPEC" >"$PEERS/mcp-server-time.spec"

# --- PyPI: fastmcp-tasks in a venv of its own (task-only tools, SRV-5) ----------------------
TASKS_VENV="$PEERS/tasks-venv"
installed_tasks() {
  [ -x "$TASKS_VENV/bin/python" ] &&
    "$TASKS_VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("fastmcp-tasks"))' 2>/dev/null
}
if [ "$(installed_tasks || true)" != "$FASTMCP_TASKS_VERSION" ]; then
  echo "installing PyPI fastmcp-tasks==$FASTMCP_TASKS_VERSION into the venv $TASKS_VENV"
  if [ ! -x "$TASKS_VENV/bin/python" ]; then
    python3 -m venv "$TASKS_VENV" || fail "python3 -m venv $TASKS_VENV failed (is the venv module installed?)"
  fi
  "$TASKS_VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
    "fastmcp-tasks==$FASTMCP_TASKS_VERSION" >&2 ||
    fail "pip install of fastmcp-tasks==$FASTMCP_TASKS_VERSION into $TASKS_VENV failed"
  "$TASKS_VENV/bin/python" -c 'from fastmcp_tasks import TasksExtension' ||
    fail "fastmcp-tasks is not usable in $TASKS_VENV after pip install"
fi

# --- PyPI: fastmcp in a venv of its own (the era tests, SPEC-1) ----------------------------
FASTMCP_VENV="$PEERS/fastmcp-venv"
installed_fastmcp() {
  [ -x "$FASTMCP_VENV/bin/python" ] &&
    "$FASTMCP_VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("fastmcp"))' 2>/dev/null
}
if [ "$(installed_fastmcp || true)" != "$FASTMCP_VERSION" ]; then
  echo "installing PyPI fastmcp==$FASTMCP_VERSION into the venv $FASTMCP_VENV"
  if [ ! -x "$FASTMCP_VENV/bin/python" ]; then
    python3 -m venv "$FASTMCP_VENV" || fail "python3 -m venv $FASTMCP_VENV failed (is the venv module installed?)"
  fi
  "$FASTMCP_VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
    "fastmcp==$FASTMCP_VERSION" >&2 ||
    fail "pip install of fastmcp==$FASTMCP_VERSION into $FASTMCP_VENV failed"
  [ "$(installed_fastmcp || true)" = "$FASTMCP_VERSION" ] &&
    "$FASTMCP_VENV/bin/python" -c 'from fastmcp import FastMCP' ||
    fail "fastmcp is not usable in $FASTMCP_VENV after pip install"
fi

echo "MCP test peers in $PEERS:"
echo "  npm  @modelcontextprotocol/server-everything $(installed_everything)  ($NPM_DIR/node_modules/.bin/mcp-server-everything)"
echo "  npm  @modelcontextprotocol/sdk $(installed_sdk)  ($SDK_DIR)"
echo "  npm  @modelcontextprotocol/server $(installed_sdk2)  ($SDK2_DIR)"
echo "  npm  MCP Apps examples: ${APPS_PACKAGES[*]}  ($APPS_DIR)"
echo "  PyPI mcp $MCP_VERSION, uv $UV_VERSION  ($VENV)"
echo "  uvx  $TIME_SPEC  (cache $UV_CACHE_DIR)"
echo "  PyPI fastmcp-tasks $(installed_tasks)  ($TASKS_VENV)"
echo "  PyPI fastmcp $(installed_fastmcp)  ($FASTMCP_VENV)"
