#!/usr/bin/env bash
# Desktop benchmark: Patchbay (release) against the floor, an empty Tauri 2 window
# (benches/empty-window, release, same Tauri and WebKitGTK), in the same run.
#
#   bash scripts/bench-desktop.sh [RUNS]        (default 7 runs per app, medians reported)
#
# For each app: one uncounted warm-up launch (creates the database and WebKit's caches, as
# on a machine where the app was used before), then RUNS launches, alternating the apps.
# Each launch measures
#   - start: from just before exec to the first IPC answer (PATCHBAY_STARTUP_PROBE=1 makes
#     the app print the time `app_info` first answers, invoked by the page once it loaded);
#   - idle memory SETTLE seconds after that answer: PSS and RSS summed over the app's
#     process and its WebKit processes (WebKitWebProcess, WebKitNetworkProcess). Any other
#     child (an MCP server) is reported on its own line and not counted.
# Then `bench-window` (tests/src/bin/bench-window.rs) drives both apps through tauri-driver:
# memory with a 200-message conversation holding 50 tool traces on screen, against the empty
# window, and the time to open a 10,000-message conversation.
# Everything runs under Xvfb in a private D-Bus session with an unlocked keyring, with a
# temporary HOME, so the user's own data, caches and keyring are not touched.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

RUNS="${1:-7}"
SETTLE="${SETTLE:-3}"
PATCHBAY="$CARGO_TARGET_DIR/release/patchbay-desktop"
FLOOR="$CARGO_TARGET_DIR/release/empty-window"

if [ "${BENCH_INNER:-}" != 1 ]; then
  require_toolchains
  ensure_packages "${APP_PACKAGES[@]}" "${TEST_PACKAGES[@]}"
  ensure_ui_deps
  ensure_tauri_driver
  build_ui
  say "Building Patchbay and the empty window in release (the first release build takes 15+ minutes)"
  (cd "$ROOT" && cargo build --release -p patchbay-desktop -p patchbay-bench-empty-window)
  (cd "$ROOT" && cargo build -p patchbay-e2e --bin bench-window)
  home="$(mktemp -d)"
  trap 'rm -rf "$home"' EXIT
  say "Measuring under Xvfb: $RUNS runs per app, memory $SETTLE s after the first IPC answer"
  HOME="$home" BENCH_INNER=1 xvfb-run -a -s "-screen 0 1280x800x24" \
    bash -c "$(declare -f with_session_bus); with_session_bus bash \"\$@\"" bash "$0" "$RUNS"
  exit
fi

# All descendants of a pid, depth first.
descendants() {
  local child
  for child in $(ps -o pid= --ppid "$1"); do
    echo "$child"
    descendants "$child"
  done
}

# "<pss_kb> <rss_kb>" of one process.
pss_rss() {
  awk '/^Pss:/ {p=$2} /^Rss:/ {r=$2} END {print p+0, r+0}' "/proc/$1/smaps_rollup" 2>/dev/null || echo "0 0"
}

# One launch of $1 (label) = binary $2 with data dir $3: prints "<start_ms> <pss_kb> <rss_kb> <procs> <others>".
launch() {
  local label="$1" bin="$2" data="$3" log t0 answered pid deadline
  log="$(mktemp)"
  t0=$(date +%s%N)
  PATCHBAY_STARTUP_PROBE=1 "$bin" --data-dir "$data" >/dev/null 2>"$log" &
  pid=$!
  deadline=$((SECONDS + 60))
  until answered=$(grep -m1 -o 'answered_unix_ns=[0-9]*' "$log"); do
    kill -0 "$pid" 2>/dev/null || die "$label exited before its first IPC answer: $(cat "$log")"
    [ $SECONDS -lt $deadline ] || die "$label gave no IPC answer within 60 s"
    sleep 0.01
  done
  sleep "$SETTLE"
  local pss=0 rss=0 procs=0 others="" p comm m
  for p in "$pid" $(descendants "$pid"); do
    comm="$(cat "/proc/$p/comm" 2>/dev/null)" || continue
    read -r -a m <<<"$(pss_rss "$p")"
    if [ "$p" = "$pid" ] || [[ "$comm" == WebKit* ]]; then
      pss=$((pss + m[0])); rss=$((rss + m[1])); procs=$((procs + 1))
    else
      others+="$comm:${m[0]}kB "
    fi
  done
  kill -TERM "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null || true
  rm -f "$log"
  echo "$(( (${answered#answered_unix_ns=} - t0) / 1000000 )) $pss $rss $procs ${others:-none}"
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : int((a[NR/2] + a[NR/2+1]) / 2)}'; }

[ -x "$PATCHBAY" ] && [ -x "$FLOOR" ] || die "build first: $PATCHBAY and $FLOOR"
work="$(mktemp -d)"
declare -A results
for app in floor patchbay; do
  bin=$FLOOR; [ $app = patchbay ] && bin=$PATCHBAY
  launch "$app (warm-up)" "$bin" "$work/$app" >/dev/null
done
printf '%-9s %4s %10s %10s %10s %6s  %s\n' app run start_ms pss_kb rss_kb procs "other children (not counted)"
for run in $(seq 1 "$RUNS"); do
  for app in floor patchbay; do
    bin=$FLOOR; [ $app = patchbay ] && bin=$PATCHBAY
    read -r ms pss rss procs others <<<"$(launch "$app" "$bin" "$work/$app")"
    printf '%-9s %4s %10s %10s %10s %6s  %s\n' "$app" "$run" "$ms" "$pss" "$rss" "$procs" "$others"
    results[$app.ms]+="$ms "; results[$app.pss]+="$pss "; results[$app.rss]+="$rss "
  done
done
rm -rf "$work"

echo
echo "Medians of $RUNS runs (memory $SETTLE s after the first IPC answer):"
for app in floor patchbay; do
  for k in ms pss rss; do
    declare "med_${app}_$k=$(tr ' ' '\n' <<<"${results[$app.$k]}" | grep . | median)"
  done
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
mb() { awk -v k="$1" 'BEGIN {printf "%.1f MB", k / 1024}'; }
printf '%-28s %12s %12s %8s %s\n' "" "empty window" "Patchbay" "ratio" "goal"
printf '%-28s %9s ms %9s ms %8s %s\n' "start to first IPC answer" "$med_floor_ms" "$med_patchbay_ms" \
  "$(ratio "$med_patchbay_ms" "$med_floor_ms")" "<= 1.30"
printf '%-28s %12s %12s %8s %s\n' "idle PSS, all app processes" "$(mb "$med_floor_pss")" "$(mb "$med_patchbay_pss")" \
  "$(ratio "$med_patchbay_pss" "$med_floor_pss")" "<= 1.25"
printf '%-28s %12s %12s %8s %s\n' "idle RSS (reference)" "$(mb "$med_floor_rss")" "$(mb "$med_patchbay_rss")" \
  "$(ratio "$med_patchbay_rss" "$med_floor_rss")" ""

echo
echo "Window benchmarks (through tauri-driver):"
"$CARGO_TARGET_DIR/debug/bench-window" --patchbay "$PATCHBAY" --floor "$FLOOR" --runs "${WINDOW_RUNS:-3}" --settle "$SETTLE"
