#!/usr/bin/env bash
# Builds Patchbay's .deb package, checks it, and tests it installed on this machine:
#   1. builds the UI and the release app with the Tauri CLI (prebuilt, from npm);
#   2. checks the .deb: size, version, desktop entry, icon, declared dependencies, the
#      .mcpb file type and the patchbay: link scheme, the CLI beside the app;
#   3. install test: dpkg -i, check that a .mcpb file is known as an MCP bundle and a
#      patchbay: link as a link that Patchbay opens, start the installed binary under Xvfb
#      with a temporary HOME, check the window and the app_info round trip over IPC, open
#      an install link through the desktop (gio open) and add its server, then check that
#      the installed CLI (`patchbay info`, `patchbay mcp list`) sees it in the same default
#      data dir; the app finds an update served over https (this package as the next patch
#      version, signed with the updater's key), refuses a tampered copy and a signed package
#      that is not the version announced (a downgrade), and installs the signed one; then dpkg -r.
# The updater's private key comes from TAURI_SIGNING_PRIVATE_KEY or ~/.patchbay-signing/patchbay.key.
# `--test-key` (for testing without the project's key): a throwaway key pair is made, and the
# package is built to trust its public half instead of tauri.conf.json's. Never publish that one.
# The package lands in $CARGO_TARGET_DIR/release/bundle/deb/ (default target dir:
# ~/.cache/patchbay/target, see common.sh). Not part of the test command.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# The Tauri CLI, pinned; npm ships it as a prebuilt binary (no 10-minute cargo install).
TAURI_CLI="@tauri-apps/cli@2.12.5"
# The issue's limit, 20 MB, read strictly (decimal megabytes).
MAX_DEB_BYTES=20000000
# The package is named after productName; the binary after mainBinaryName.
PACKAGE=patchbay
# What the file-type checks use: the MIME database and its tools, GIO's `gio`.
CHECK_PACKAGES=(shared-mime-info libglib2.0-bin desktop-file-utils)

test_key=""
case "${1:-}" in
  "") ;;
  --test-key) test_key=1 ;;
  *) die "unknown option '$1' (scripts/package.sh [--test-key])" ;;
esac

require_toolchains
ensure_packages "${APP_PACKAGES[@]}" "${TEST_PACKAGES[@]}" "${CHECK_PACKAGES[@]}"
ensure_ui_deps
ensure_tauri_driver
build_ui

version="$(cd "$ROOT" && cargo metadata --no-deps --format-version 1 |
  node -e 'const m = JSON.parse(require("fs").readFileSync(0, "utf8"));
           process.stdout.write(m.packages.find((p) => p.name === "patchbay-desktop").version)')"
arch="$(dpkg --print-architecture)"
deb_dir="$CARGO_TARGET_DIR/release/bundle/deb"
deb="$deb_dir/Patchbay_${version}_${arch}.deb"

# The CLI is the app's own binary called by its name (src-tauri/linux/patchbay, a script).
say "Building patchbay-sandbox-init, which the .deb installs beside the app (tauri.conf.json, deb files)"
(cd "$ROOT" && cargo build --release -p patchbay-sandbox-init)
install -D -m755 "$CARGO_TARGET_DIR/release/patchbay-sandbox-init" "$ROOT/src-tauri/binaries/patchbay-sandbox-init"
# The updater's signing key (tauri.conf.json has its public half): from the environment, as the
# release workflow gives it, else from the maintainer's file outside the repository.
build_config=()
if [ -n "$test_key" ]; then
  keys="$(mktemp -d)"
  (cd "$ROOT/src-tauri" && npx --yes "$TAURI_CLI" signer generate --ci --password "" -w "$keys/test.key" >/dev/null)
  TAURI_SIGNING_PRIVATE_KEY="$(cat "$keys/test.key")"
  export TAURI_SIGNING_PRIVATE_KEY TAURI_SIGNING_PRIVATE_KEY_PASSWORD=""
  printf '{"plugins":{"updater":{"pubkey":"%s"}}}\n' "$(cat "$keys/test.key.pub")" >"$keys/config.json"
  rm -f "$keys/test.key" # the script keeps it in its environment only
  build_config=(--config "$keys/config.json")
  say "--test-key: this package trusts a throwaway key (made in $keys), not the project's: test it, never publish it"
elif [ -z "${TAURI_SIGNING_PRIVATE_KEY:-}" ]; then
  key_file="${PATCHBAY_SIGNING_KEY:-$HOME/.patchbay-signing/patchbay.key}"
  [ -f "$key_file" ] || die "no updater signing key: set TAURI_SIGNING_PRIVATE_KEY or put it in $key_file (docs/PACKAGING.md, Updates), or pass --test-key to test with a throwaway one"
  TAURI_SIGNING_PRIVATE_KEY="$(cat "$key_file")"
  export TAURI_SIGNING_PRIVATE_KEY TAURI_SIGNING_PRIVATE_KEY_PASSWORD="${TAURI_SIGNING_PRIVATE_KEY_PASSWORD:-}"
fi
say "Building the release app and the .deb with $TAURI_CLI (the first release build takes 15+ minutes)"
rm -f "$deb"
# Run from src-tauri: the CLI takes the package (name, version) from the Cargo.toml next to
# the tauri.conf.json it finds first, and the top-level Cargo.toml is a virtual workspace.
(cd "$ROOT/src-tauri" && npx --yes "$TAURI_CLI" build --ci --bundles deb "${build_config[@]}")
[ -f "$deb" ] || die "the Tauri CLI produced no $deb"
# Tauri compresses the package with gzip; xz (which every dpkg reads) makes it about a third
# smaller. Repacked from the unpacked tree, so contents and control fields stay as Tauri made them.
say "Recompressing $deb with xz"
repack="$(mktemp -d)"
dpkg-deb --raw-extract "$deb" "$repack/root"
dpkg-deb -Zxz -z9 --root-owner-group --build "$repack/root" "$deb" >/dev/null
rm -rf "$repack"

say "Checking $deb"
size=$(stat -c %s "$deb")
[ "$size" -le "$MAX_DEB_BYTES" ] || die "the .deb weighs $size bytes, over the $MAX_DEB_BYTES-byte limit"
field() { dpkg-deb --field "$deb" "$1"; }
[ "$(field Package)" = "$PACKAGE" ] || die "package name is $(field Package), expected $PACKAGE"
[ "$(field Version)" = "$version" ] || die "package version is $(field Version), the workspace says $version"
depends="$(field Depends)"
# bubblewrap: the sandbox of local MCP servers (ARCHITECTURE.md, "Tool security policy");
# libayatana-appindicator3-1: the tray icon (Tauri adds it).
for dep in libwebkit2gtk-4.1-0 libgtk-3-0 bubblewrap libayatana-appindicator3-1; do
  grep -q "\b$dep\b" <<<"$depends" || die "the .deb does not declare $dep (Depends: $depends)"
done
contents="$(dpkg-deb --contents "$deb")"
for f in ./usr/bin/patchbay-desktop ./usr/bin/patchbay-sandbox-init ./usr/bin/patchbay ./usr/share/applications/Patchbay.desktop \
  ./usr/share/icons/hicolor/128x128/apps/patchbay-desktop.png ./usr/share/mime/packages/patchbay-mcpb.xml; do
  # dpkg-deb lists paths with or without a leading "./", depending on how the archive was made.
  grep -qE " (\./)?${f#./}\$" <<<"$contents" || die "the .deb has no $f"
done
unpacked="$(mktemp -d)"
trap 'rm -rf "$unpacked"' EXIT
dpkg-deb --extract "$deb" "$unpacked"
entry="$unpacked/usr/share/applications/Patchbay.desktop"
for line in "Name=Patchbay" "Exec=patchbay-desktop %u" "Icon=patchbay-desktop" "Type=Application" "Categories=Office;" \
  "MimeType=application/x-mcpb;x-scheme-handler/patchbay;"; do
  grep -qx "$line" "$entry" || die "the desktop entry lacks '$line':"$'\n'"$(cat "$entry")"
done
if command -v desktop-file-validate >/dev/null; then desktop-file-validate "$entry"; fi
# The real icon set (generated from docs/icon.svg), not Tauri's default.
cmp -s "$unpacked/usr/share/icons/hicolor/128x128/apps/patchbay-desktop.png" "$ROOT/src-tauri/icons/128x128.png" ||
  die "the packaged 128x128 icon is not src-tauri/icons/128x128.png"
say "The .deb is good: $(numfmt --to=iec-i --suffix=B "$size") ($size bytes), version $version, Depends: $depends"

if dpkg-query -W -f='${Status}' "$PACKAGE" 2>/dev/null | grep -q "install ok installed"; then
  die "$PACKAGE is already installed on this machine; the install test would replace and then remove it. Remove it first (dpkg -r $PACKAGE) or install $deb yourself."
fi
say "Building the install check (tests/src/bin/install-check.rs)"
(cd "$ROOT" && cargo build --quiet -p patchbay-e2e --bin install-check)
check="$CARGO_TARGET_DIR/debug/install-check"

# An update to offer the installed app: this package as the next patch version, signed with the
# updater's key; a copy with one byte changed (its signature no longer matches); and this very
# package, signed, announced as the next version (a feed replaying an older package). Served over
# https by a local server whose certificate the app trusts through SSL_CERT_FILE.
feed="$(mktemp -d)"
newer="$(awk -F. '{ printf "%s.%s.%d", $1, $2, $3 + 1 }' <<<"${version%%[-+]*}")"
repack="$(mktemp -d)"
dpkg-deb --raw-extract "$deb" "$repack/root"
sed -i "s/^Version: .*/Version: $newer/" "$repack/root/DEBIAN/control"
dpkg-deb -Zxz --root-owner-group --build "$repack/root" "$feed/patchbay-$newer.deb" >/dev/null
rm -rf "$repack"
cp "$deb" "$feed/patchbay-$version.deb"
for signed in "patchbay-$newer.deb" "patchbay-$version.deb"; do
  (cd "$ROOT/src-tauri" && npx --yes "$TAURI_CLI" signer sign --private-key "$TAURI_SIGNING_PRIVATE_KEY" \
    --password "${TAURI_SIGNING_PRIVATE_KEY_PASSWORD:-}" "$feed/$signed" >/dev/null)
done
cp "$feed/patchbay-$newer.deb" "$feed/tampered.deb"
printf 'X' | dd of="$feed/tampered.deb" bs=1 seek=$(($(stat -c %s "$feed/tampered.deb") / 2)) conv=notrunc status=none
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=Patchbay test CA" -keyout "$feed/ca.key" -out "$feed/ca.pem" \
  -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout "$feed/server.key" -out "$feed/server.csr" 2>/dev/null
openssl x509 -req -in "$feed/server.csr" -CA "$feed/ca.pem" -CAkey "$feed/ca.key" -CAcreateserial -days 1 \
  -extfile <(printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n') \
  -out "$feed/server.pem" 2>/dev/null
python3 - "$feed" <<'PY' >"$feed/port" &
import http.server, ssl, sys, functools
root = sys.argv[1]
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(http.server.SimpleHTTPRequestHandler, directory=root))
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(f"{root}/server.pem", f"{root}/server.key")
server.socket = context.wrap_socket(server.socket, server_side=True)
print(server.server_address[1], flush=True)
server.serve_forever()
PY
feed_server=$!
trap 'kill $feed_server 2>/dev/null; rm -rf "$unpacked" "$feed"' EXIT
for _ in $(seq 50); do [ -s "$feed/port" ] && break; sleep 0.1; done
port="$(cat "$feed/port")"
[ -n "$port" ] || die "the update feed's server did not start"
manifest() { # the feed announcing $newer, serving $1 with the signature of $2
  printf '{"version":"%s","notes":"The next patch of Patchbay (made by scripts/package.sh)","pub_date":"%s",
    "platforms":{"linux-x86_64-deb":{"signature":"%s","url":"https://127.0.0.1:%s/%s"}}}\n' \
    "$newer" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$(cat "$feed/$2.sig")" "$port" "$1"
}
manifest "patchbay-$newer.deb" "patchbay-$newer.deb" >"$feed/good.json"
manifest "patchbay-$version.deb" "patchbay-$version.deb" >"$feed/older.json"
manifest tampered.deb "patchbay-$newer.deb" >"$feed/latest.json"

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
home="$(mktemp -d)"
trap 'kill $feed_server 2>/dev/null; rm -rf "$unpacked" "$home" "$feed"; $sudo dpkg -r "$PACKAGE" >/dev/null 2>&1 || true' EXIT
say "Install test: dpkg -i, start /usr/bin/patchbay-desktop under Xvfb with HOME=$home"
$sudo dpkg -i "$deb" >/dev/null
installed=/usr/bin/patchbay-desktop
[ -x "$installed" ] || die "dpkg -i installed no $installed"
# A bundle is known by its name (dpkg's trigger ran update-mime-database), and Patchbay opens it.
python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1], "w").writestr("manifest.json", "{}")' "$home/notes.mcpb"
type="$(gio info -a standard::content-type "$home/notes.mcpb" | sed -n 's/^ *standard::content-type: //p')"
[ "$type" = application/x-mcpb ] || die "an installed Patchbay leaves .mcpb files typed '$type', not application/x-mcpb"
handlers="$(gio mime application/x-mcpb)"
grep -q "Patchbay.desktop" <<<"$handlers" || die "Patchbay is not an application for application/x-mcpb: $handlers"
# A patchbay: link opens Patchbay (dpkg's trigger ran update-desktop-database).
handlers="$(gio mime x-scheme-handler/patchbay)"
grep -q "Patchbay.desktop" <<<"$handlers" || die "Patchbay does not open patchbay: links: $handlers"
# The CLI came with the app, at its version.
cli=/usr/bin/patchbay
[ -x "$cli" ] || die "dpkg -i installed no $cli"
say "Install test: the app finds the update at https://127.0.0.1:$port, refuses a tampered package and an older one, installs $newer"
HOME="$home" PATCHBAY_APP="$installed" PATCHBAY_UPDATE_DIR="$feed" PATCHBAY_UPDATE_VERSION="$newer" \
  PATCHBAY_UPDATE_URL="https://127.0.0.1:$port/latest.json" SSL_CERT_FILE="$feed/ca.pem" \
  xvfb-run -a -s "-screen 0 1280x800x24" \
  bash -c "$(declare -f with_session_bus); with_session_bus \"\$@\"" bash "$check"
# The installed CLI works on the app's default data dir: it lists the server the link added there.
info="$(HOME="$home" "$cli" info)" || die "patchbay info failed: $info"
grep -q "$version" <<<"$info" || die "patchbay info does not show version $version:"$'\n'"$info"
grep -q "$home/.local/share/patchbay" <<<"$info" || die "patchbay info does not use the app's data dir:"$'\n'"$info"
listed="$(HOME="$home" "$cli" mcp list)" || die "patchbay mcp list failed: $listed"
grep -q "^linked " <<<"$listed" || die "the installed CLI does not list the server the install link added:"$'\n'"$listed"
say "The installed CLI: $("$cli" --version), on the app's data dir; patchbay mcp list: $(tr '\n' ' ' <<<"$listed")"
say "Removing the package (dpkg -r)"
$sudo dpkg -r "$PACKAGE" >/dev/null
[ ! -e "$installed" ] || die "dpkg -r left $installed behind"
[ ! -e "$cli" ] || die "dpkg -r left $cli behind"
[ ! -e /usr/share/mime/packages/patchbay-mcpb.xml ] || die "dpkg -r left the .mcpb file type behind"
say "Packaged and tested: $deb ($size bytes)"
