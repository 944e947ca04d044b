#!/usr/bin/env bash
# The main job on the bundled demo (offline): list the servers (nothing starts; the project's
# servers wait for your approval), see that an unapproved server does not run, approve both,
# connect the stdio demo server to list its tools and call one, do the same over Streamable HTTP,
# then list again (the tools now come from the snapshot cache, marked as such) and revoke the
# approvals.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --quiet -p wave-mcp -p wave-mcp-test-server --bins
wave=target/debug/wave-mcp
demo=examples/demo

run() {
  echo "\$ wave-mcp $*"
  "$wave" "$@"
  echo
}

run servers --workdir "$demo"
# Not approved: nothing of it runs (without a terminal to ask on, one line says what to do).
echo "\$ wave-mcp tools demo --workdir $demo </dev/null"
"$wave" tools demo --workdir "$demo" </dev/null || true
echo
run approve demo --workdir "$demo"
run approve demo-http --workdir "$demo"
run tools demo --workdir "$demo"
run call demo echo '{"text": "hello from wave-mcp"}' --workdir "$demo"

# The demo-http entry points at 127.0.0.1:${DEMO_HTTP_PORT:-8765}: start our server there.
port_file=$(mktemp)
target/debug/wave-mcp-test-server --transport http --port 0 --name demo-http --tools echo,add,mixed >"$port_file" &
http_pid=$!
trap 'kill $http_pid 2>/dev/null || true; rm -f "$port_file"' EXIT
for _ in $(seq 100); do grep -q listening "$port_file" && break; sleep 0.05; done
DEMO_HTTP_PORT=$(sed -E 's#.*127\.0\.0\.1:([0-9]+)/mcp#\1#' "$port_file")
export DEMO_HTTP_PORT
run call demo-http add '{"a": 2, "b": 40}' --workdir "$demo"

run servers --workdir "$demo"
run revoke demo --workdir "$demo"
run revoke demo-http --workdir "$demo"
