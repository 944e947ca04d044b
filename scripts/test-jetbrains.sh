#!/usr/bin/env bash
# The JetBrains plugin's client module (jetbrains-plugin/client): compiles it with kotlinc and
# runs its JUnit 5 tests against the real sidecar (target/debug/wave-mcp) and our test MCP
# server. Installs what it needs when missing: kotlinc from npm `kotlin-compiler` into
# $WAVE_JB_CACHE (outside the repo), Debian `junit5` and `libgoogle-gson-java`. Prints
# `N passed, N failed` and exits non-zero on any failure.
#
# The IntelliJ layer (jetbrains-plugin/intellij) needs the IntelliJ Platform SDK, which these
# machines cannot download: it is not built here (see jetbrains-plugin/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"

KOTLIN_VERSION=2.4.20
CACHE="${WAVE_JB_CACHE:-$HOME/.cache/wave-mcp-jetbrains}"
KOTLIN_HOME="$CACHE/node_modules/kotlin-compiler"
JUNIT_JAR=/usr/share/java/junit-platform-console-standalone.jar
GSON_JAR=/usr/share/java/gson.jar

echo "== jetbrains: toolchain"
if ! command -v java >/dev/null 2>&1; then
  echo "error: java (17 or newer) is required" >&2
  exit 1
fi
java -version 2>&1 | head -1
if [[ ! -f "$JUNIT_JAR" || ! -f "$GSON_JAR" ]]; then
  bash scripts/apt-install.sh junit5 libgoogle-gson-java
fi
if [[ "$(cat "$KOTLIN_HOME/build.txt" 2>/dev/null)" != "$KOTLIN_VERSION" ]]; then
  echo "installing kotlinc $KOTLIN_VERSION (npm kotlin-compiler) into $CACHE"
  mkdir -p "$CACHE"
  npm install --prefix "$CACHE" --no-audit --no-fund --no-save --loglevel=error "kotlin-compiler@$KOTLIN_VERSION" >/dev/null
fi
KOTLINC="$KOTLIN_HOME/bin/kotlinc"
STDLIB="$KOTLIN_HOME/lib/kotlin-stdlib.jar"
REFLECT="$KOTLIN_HOME/lib/kotlin-reflect.jar"
echo "kotlinc $(cat "$KOTLIN_HOME/build.txt")"

echo "== jetbrains: sidecar and test MCP server"
# CI builds exactly what Cargo.lock says; locally the lock file may follow Cargo.toml edits.
cargo build ${CI:+--locked} -p wave-mcp -p wave-mcp-test-server --bins

echo "== jetbrains: compile the client module and its tests"
CLIENT="$ROOT/jetbrains-plugin/client"
BUILD="$CLIENT/build"
mkdir -p "$BUILD"
# The client must stay free of IntelliJ (and of test) dependencies.
if grep -rnE 'com\.intellij|org\.jetbrains\.intellij|org\.junit' "$CLIENT/src/main"; then
  echo "error: the client module refers to IntelliJ or JUnit classes" >&2
  exit 1
fi
# Recompile only when the sources or the compiler changed (kotlinc is slow to start). Main and
# tests compile in one kotlinc run: one JVM warm-up instead of two.
STAMP="$( (echo "$KOTLIN_VERSION"; cd "$CLIENT" && find src -name '*.kt' -print0 | sort -z | xargs -0 sha256sum) | sha256sum | cut -d' ' -f1)"
if [[ "$(cat "$BUILD/stamp" 2>/dev/null)" != "$STAMP" || ! -f "$BUILD/client-tests.jar" ]]; then
  rm -f "$BUILD/stamp" "$BUILD/client-tests.jar"
  export JAVA_OPTS="${JAVA_OPTS:--XX:+UseParallelGC -XX:TieredStopAtLevel=1}"
  "$KOTLINC" -jvm-target 17 -nowarn -no-reflect \
    -cp "$GSON_JAR:$JUNIT_JAR:$REFLECT" \
    -d "$BUILD/client-tests.jar" "$CLIENT/src/main/kotlin" "$CLIENT/src/test/kotlin"
  echo "$STAMP" >"$BUILD/stamp"
else
  echo "sources unchanged: reusing $BUILD/client-tests.jar"
fi

echo "== jetbrains: JUnit 5 tests against the real sidecar"
export WAVE_MCP_BIN="$ROOT/target/debug/wave-mcp"
export WAVE_MCP_TEST_SERVER="$ROOT/target/debug/wave-mcp-test-server"
export WAVE_JB_SCHEMA="$ROOT/jetbrains-plugin/protocol.schema.json"
WAVE_JB_TMP="$(mktemp -d "${TMPDIR:-/tmp}/wave-mcp-jb.XXXXXX")"
export WAVE_JB_TMP
REPORTS="$BUILD/test-reports"
rm -rf "$REPORTS"
set +e
java -jar "$JUNIT_JAR" \
  --disable-banner --details=tree --disable-ansi-colors \
  --class-path "$BUILD/client-tests.jar:$GSON_JAR:$STDLIB:$REFLECT" \
  --scan-class-path "$BUILD/client-tests.jar" \
  --fail-if-no-tests \
  --reports-dir "$REPORTS" 2>&1 | tee "$BUILD/junit.log"
STATUS=${PIPESTATUS[0]}
set -e

# The launcher's summary ("[  12 tests successful ]", "[ 0 tests failed ]") as a plain line.
PASSED=$(sed -nE 's/^\[ *([0-9]+) tests successful *\]$/\1/p' "$BUILD/junit.log" | tail -1)
FAILED=$(sed -nE 's/^\[ *([0-9]+) tests failed *\]$/\1/p' "$BUILD/junit.log" | tail -1)
SKIPPED=$(sed -nE 's/^\[ *([0-9]+) tests skipped *\]$/\1/p' "$BUILD/junit.log" | tail -1)
ABORTED=$(sed -nE 's/^\[ *([0-9]+) tests aborted *\]$/\1/p' "$BUILD/junit.log" | tail -1)
PASSED=${PASSED:-0}
FAILED=${FAILED:-0}

echo "== jetbrains: no MCP test server left running"
LEFT=0
if pgrep -f "$WAVE_JB_TMP" >/dev/null; then
  pgrep -af "$WAVE_JB_TMP"
  echo "error: test servers outlived the JetBrains client tests" >&2
  LEFT=1
fi
rm -rf "$WAVE_JB_TMP"

echo "$PASSED passed, $FAILED failed, $(( ${SKIPPED:-0} + ${ABORTED:-0} )) skipped"
# With `CI` set a skipped or aborted test (an assumption that did not hold) fails the run.
SKIPPED_CI=0
if [[ -n "${CI:-}" && $(( ${SKIPPED:-0} + ${ABORTED:-0} )) -ne 0 ]]; then
  echo "error: tests were skipped, and CI is set" >&2
  SKIPPED_CI=1
fi
if [[ $STATUS -ne 0 || $FAILED -ne 0 || $LEFT -ne 0 || $PASSED -eq 0 || $SKIPPED_CI -ne 0 ]]; then
  exit 1
fi
