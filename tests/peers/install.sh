#!/usr/bin/env bash
# Installs the pinned real MCP servers the tests talk to, outside the source tree:
#   $PATCHBAY_CACHE/peers/node_modules  npm peers (and Node 22 for the conformance suite)
#   $PATCHBAY_CACHE/peers/venv          PyPI peers
# Re-running is cheap: nothing is reinstalled while the pins are unchanged.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DEST="${PATCHBAY_CACHE:-$HOME/.cache/patchbay}/peers"
mkdir -p "$DEST"

# npm: package.json and its lock live here; installed into $DEST.
if ! cmp -s "$HERE/package-lock.json" "$DEST/package-lock.json" 2>/dev/null || [ ! -d "$DEST/node_modules" ]; then
  echo "peers: installing npm peers into $DEST" >&2
  cp "$HERE/package.json" "$HERE/package-lock.json" "$DEST/"
  (cd "$DEST" && npm ci --no-audit --no-fund --loglevel=error)
fi

# PyPI: a venv with pinned versions.
if ! cmp -s "$HERE/requirements.txt" "$DEST/requirements.txt" 2>/dev/null || [ ! -x "$DEST/venv/bin/python" ]; then
  echo "peers: installing PyPI peers into $DEST/venv" >&2
  rm -rf "$DEST/venv"
  python3 -m venv "$DEST/venv"
  "$DEST/venv/bin/pip" install --quiet --disable-pip-version-check -r "$HERE/requirements.txt"
  cp "$HERE/requirements.txt" "$DEST/requirements.txt"
fi

# mcp-server-fetch's readabilipy runs Readability.js on Node, and would `npm install` its
# JavaScript on the first fetch (inside a test, perhaps sandboxed): install it here, from a lock.
js=("$DEST"/venv/lib/python3*/site-packages/readabilipy/javascript)
if ! cmp -s "$HERE/readabilipy/package-lock.json" "${js[0]}/package-lock.json" 2>/dev/null ||
  [ ! -d "${js[0]}/node_modules" ]; then
  echo "peers: installing readabilipy's JavaScript into ${js[0]}" >&2
  cp "$HERE/readabilipy/package-lock.json" "${js[0]}/"
  (cd "${js[0]}" && npm ci --no-audit --no-fund --loglevel=error)
fi
