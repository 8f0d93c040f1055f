# Shared set-up for scripts/run.sh and scripts/test.sh. Sourced, not run.
# Installs only what is missing; every step says what it does.

set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${PATCHBAY_CACHE:-$HOME/.cache/patchbay}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$CACHE/target}"
# The scripts build the workspace from scratch or not at all: incremental state only
# costs time and disk there (it was 24 GB). A plain `cargo` in a shell keeps it.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
export npm_config_cache="${npm_config_cache:-$CACHE/npm}"
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false

# What building and running the desktop app needs (Debian 12 / Ubuntu 24.04 names).
APP_PACKAGES=(libwebkit2gtk-4.1-dev libgtk-3-dev librsvg2-dev libsoup-3.0-dev libjavascriptcoregtk-4.1-dev
  libayatana-appindicator3-dev libssl-dev pkg-config build-essential dbus-x11 gnome-keyring
  bubblewrap)

# What the tests add: a virtual display, the WebKit WebDriver, a venv for Python peers,
# the openssl command that makes certificates for the bundle-signature tests, and
# xdotool, which presses the quick-ask shortcut and types in that window.
# fonts-wqy-microhei: Chinese glyphs in the window's screenshots (tests/tests/look.rs).
# dunst and libnotify-bin: a notification server and notify-send, for a scheduled run's notification
# (systemd: the busctl that dunstctl reads it back with).
# xdg-desktop-portal and xdg-desktop-portal-kde: the desktop's GlobalShortcuts portal (KDE's, with
# kglobalaccel) that holds the quick-ask shortcut in a Wayland session.
TEST_PACKAGES=(xvfb webkit2gtk-driver python3-venv openssl xdotool fonts-wqy-microhei dunst libnotify-bin systemd
  xdg-desktop-portal xdg-desktop-portal-kde)

# Each step says when it started (seconds since the script did), to see where the time goes.
say() { printf '\033[1m==> [%ss] %s\033[0m\n' "$SECONDS" "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

require_toolchains() {
  command -v cargo >/dev/null || die "Rust is missing: install it with rustup (https://rustup.rs), stable 1.90 or newer"
  command -v node >/dev/null || die "Node.js is missing: install Node 20 or newer"
  local major; major="$(node -p 'process.versions.node.split(".")[0]')"
  [ "$major" -ge 20 ] || die "Node $major is too old: Patchbay's UI needs Node 20 or newer"
}

ensure_packages() {
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ "${#missing[@]}" -eq 0 ] && return 0
  say "Installing system packages: ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

ensure_ui_deps() {
  if [ ! -d "$ROOT/ui/node_modules" ] || [ "$ROOT/ui/package-lock.json" -nt "$ROOT/ui/node_modules/.package-lock.json" ]; then
    say "Installing UI dependencies (npm ci)"
    (cd "$ROOT/ui" && npm ci --no-audit --no-fund --loglevel=error)
  fi
}

ensure_tauri_driver() {
  if ! command -v tauri-driver >/dev/null; then
    say "Installing tauri-driver (cargo install, about 90 s)"
    cargo install tauri-driver --locked --quiet
  fi
}

build_ui() {
  say "Building the UI (vite build)"
  (cd "$ROOT/ui" && npx --no-install vite build --logLevel warn)
}

build_app() {
  # --workspace --bins builds with the same features as the test command, so the two
  # share every compiled dependency (a -p build would unify features differently; so
  # would a feature only a dev-dependency turns on: see tokio in Cargo.toml).
  say "Building the desktop app and the CLI (cargo build --workspace --bins; the first build takes several minutes)"
  (cd "$ROOT" && cargo build --workspace --bins)
}

# Runs "$@" inside a private D-Bus session with an unlocked keyring. With KEYRING_DIR set, the
# keyring daemon keeps its files and sockets there, so sessions side by side (test.sh's two
# lanes) never share a keyring; without it, the user's keyring folder is used.
with_session_bus() {
  dbus-run-session -- bash -c 'echo | env ${KEYRING_DIR:+XDG_DATA_HOME=$KEYRING_DIR XDG_RUNTIME_DIR=$KEYRING_DIR} \
    gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&1; exec "$@"' bash "$@"
}
