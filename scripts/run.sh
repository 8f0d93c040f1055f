#!/usr/bin/env bash
# Installs whatever is missing, builds Patchbay and opens its window.
# Arguments are passed to the app (e.g. --data-dir DIR).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

require_toolchains
ensure_packages "${APP_PACKAGES[@]}"
ensure_ui_deps
build_ui
build_app

app=("$CARGO_TARGET_DIR/debug/patchbay-desktop" "$@")
if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
  ensure_packages xvfb
  say "No display: starting Patchbay under Xvfb"
  app=(xvfb-run -a -s "-screen 0 1280x800x24" "${app[@]}")
fi
say "Starting Patchbay"
if [ -z "${DBUS_SESSION_BUS_ADDRESS:-}" ]; then
  # Without a session bus WebKit leaves daemons behind and no keyring is reachable.
  with_session_bus "${app[@]}"
else
  exec "${app[@]}"
fi
