#!/usr/bin/env bash
# Records the tools/list of real MCP servers from npm and PyPI into bench/fixtures/catalog/
# (bench row 8, BUD-7): one file per server, {package, registry, version, tools:[...]}.
# Servers are installed into a cache outside the repository (WAVE_CATALOG_DIR, default
# ~/.cache/wave-mcp-catalog), started over stdio with dummy tokens where a server needs one
# just to list its tools, under a throw-away HOME, and listed with the official python SDK
# (scripts/list-tools.py; every field as sent: title, annotations and inputSchema too).
#   scripts/record-catalog.sh [SERVER...]     (default: every server below)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${WAVE_CATALOG_DIR:-$HOME/.cache/wave-mcp-catalog}
OUT=$ROOT/bench/fixtures/catalog
NPM_PACKAGES=(
  @modelcontextprotocol/server-filesystem @modelcontextprotocol/server-everything
  @modelcontextprotocol/server-memory @modelcontextprotocol/server-sequential-thinking
  @modelcontextprotocol/server-puppeteer @modelcontextprotocol/server-github
  @modelcontextprotocol/server-gitlab @modelcontextprotocol/server-slack
  @modelcontextprotocol/server-google-maps @modelcontextprotocol/server-brave-search
  @modelcontextprotocol/server-postgres
  @playwright/mcp chrome-devtools-mcp @wonderwhy-er/desktop-commander
  @notionhq/notion-mcp-server @sentry/mcp-server @upstash/context7-mcp mcp-server-kubernetes
)
PYPI_PACKAGES=(mcp-server-git mcp-server-time mcp-server-fetch)
# Their latest releases break against the newest dependencies; each gets a venv with a pin.
SQLITE_PACKAGES=(mcp-server-sqlite "mcp<1.20" "pydantic<2.12")
ATLASSIAN_PACKAGES=(mcp-atlassian "markdown-to-confluence<0.4")

mkdir -p "$CACHE/npm" "$OUT"
if [ ! -d "$CACHE/npm/node_modules/@modelcontextprotocol/server-filesystem" ]; then
  (cd "$CACHE/npm" && { [ -f package.json ] || npm init -y >/dev/null; } &&
    npm install --no-audit --no-fund --ignore-scripts "${NPM_PACKAGES[@]}")
fi
venv() { # dir packages...
  local dir=$CACHE/$1; shift
  if [ ! -x "$dir/bin/python" ]; then
    python3 -m venv "$dir" && "$dir/bin/pip" install -q "$@"
  fi
}
venv venv "${PYPI_PACKAGES[@]}"
venv venv-sqlite "${SQLITE_PACKAGES[@]}"
venv venv-atlassian "${ATLASSIAN_PACKAGES[@]}"
# The lister's SDK: the venv with the pinned `mcp` (its client API is the one list-tools.py uses).
LISTER=$CACHE/venv-sqlite/bin/python
BIN=$CACHE/npm/node_modules/.bin
PY=$CACHE/venv/bin
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/home" "$WORK/wd" "$WORK/repo"
git -C "$WORK/repo" init -q

# name|registry|package|command|args (space separated)|env (K=V, space separated)
SERVERS=(
  "filesystem|npm|@modelcontextprotocol/server-filesystem|$BIN/mcp-server-filesystem|$WORK/wd|"
  "everything|npm|@modelcontextprotocol/server-everything|$BIN/mcp-server-everything|stdio|"
  "memory|npm|@modelcontextprotocol/server-memory|$BIN/mcp-server-memory||MEMORY_FILE_PATH=$WORK/memory.json"
  "sequential-thinking|npm|@modelcontextprotocol/server-sequential-thinking|$BIN/mcp-server-sequential-thinking||"
  "puppeteer|npm|@modelcontextprotocol/server-puppeteer|$BIN/mcp-server-puppeteer||"
  "github|npm|@modelcontextprotocol/server-github|$BIN/mcp-server-github||GITHUB_PERSONAL_ACCESS_TOKEN=dummy"
  "gitlab|npm|@modelcontextprotocol/server-gitlab|$BIN/mcp-server-gitlab||GITLAB_PERSONAL_ACCESS_TOKEN=dummy GITLAB_API_URL=https://gitlab.invalid/api/v4"
  "slack|npm|@modelcontextprotocol/server-slack|$BIN/mcp-server-slack||SLACK_BOT_TOKEN=xoxb-dummy SLACK_TEAM_ID=T000"
  "google-maps|npm|@modelcontextprotocol/server-google-maps|$BIN/mcp-server-google-maps||GOOGLE_MAPS_API_KEY=dummy"
  "brave-search|npm|@modelcontextprotocol/server-brave-search|$BIN/mcp-server-brave-search||BRAVE_API_KEY=dummy"
  "postgres|npm|@modelcontextprotocol/server-postgres|$BIN/mcp-server-postgres|postgresql://localhost/none|"
  "playwright|npm|@playwright/mcp|$BIN/playwright-mcp|--headless|"
  "chrome-devtools|npm|chrome-devtools-mcp|$BIN/chrome-devtools-mcp|--headless|"
  "desktop-commander|npm|@wonderwhy-er/desktop-commander|$BIN/desktop-commander||"
  "notion|npm|@notionhq/notion-mcp-server|$BIN/notion-mcp-server||NOTION_TOKEN=ntn_dummy"
  "sentry|npm|@sentry/mcp-server|$BIN/sentry-mcp|--access-token=dummy|"
  "context7|npm|@upstash/context7-mcp|$BIN/context7-mcp||"
  "kubernetes|npm|mcp-server-kubernetes|$BIN/mcp-server-kubernetes||"
  "git|pypi|mcp-server-git|$PY/mcp-server-git|--repository $WORK/repo|"
  "time|pypi|mcp-server-time|$PY/mcp-server-time||"
  "fetch|pypi|mcp-server-fetch|$PY/mcp-server-fetch||"
  "sqlite|pypi|mcp-server-sqlite|$CACHE/venv-sqlite/bin/mcp-server-sqlite|--db-path $WORK/db.sqlite|"
  "atlassian|pypi|mcp-atlassian|$CACHE/venv-atlassian/bin/mcp-atlassian||JIRA_URL=https://example.atlassian.net JIRA_USERNAME=a@example.com JIRA_API_TOKEN=dummy CONFLUENCE_URL=https://example.atlassian.net/wiki CONFLUENCE_USERNAME=a@example.com CONFLUENCE_API_TOKEN=dummy"
)

version() { # registry package
  case $1 in
    npm) node -e 'const fs=require("fs");console.log(JSON.parse(fs.readFileSync(process.argv[1]+"/package.json")).version)' "$CACHE/npm/node_modules/$2" ;;
    pypi) "$(dirname "$3")/python" -c 'import importlib.metadata,sys;print(importlib.metadata.version(sys.argv[1]))' "$2" ;;
  esac
}

failed=()
for line in "${SERVERS[@]}"; do
  IFS='|' read -r name registry package command args env <<<"$line"
  if [ $# -gt 0 ] && [[ " $* " != *" $name "* ]]; then continue; fi
  # shellcheck disable=SC2086 # args and env are word lists
  if ! (cd "$WORK" && HOME=$WORK/home timeout 180 env $env "$LISTER" "$ROOT/scripts/list-tools.py" "$command" $args \
      >"$WORK/$name.json" 2>"$WORK/$name.err"); then
    echo "FAILED $name: $(tail -3 "$WORK/$name.err")" >&2
    failed+=("$name")
    continue
  fi
  python3 - "$WORK/$name.json" "$OUT/$name.json" "$name" "$package" "$registry" "$(version "$registry" "$package" "$command")" <<'PY2'
import json, sys
src, dst, name, package, registry, version = sys.argv[1:]
listed = json.load(open(src))
keep = ("name", "title", "description", "inputSchema", "annotations")
tools = [{k: t[k] for k in keep if t.get(k) is not None} for t in listed["tools"]]
with open(dst, "w") as out:
    json.dump({"server": name, "package": package, "registry": registry, "version": version,
               "tools": tools}, out, indent=1, ensure_ascii=False)
    out.write("\n")
print(f"{name}: {package} {version}, {len(tools)} tools")
PY2
done
[ ${#failed[@]} -eq 0 ] || { echo "not recorded: ${failed[*]}" >&2; exit 1; }
