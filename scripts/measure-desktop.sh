#!/usr/bin/env bash
# Measures the desktop app for docs/benchmarks.md: how long from launch
# until its window's page has loaded (the panel is drawn and its data
# requested), and its idle memory (the app plus the WebKit processes it
# starts) after IDLE seconds. Each run uses a fresh database and fresh data
# directories. Needs a display: `xvfb-run -a scripts/measure-desktop.sh`.
#   RUNS=5 IDLE=10 scripts/measure-desktop.sh    (APP=PATH measures another build)
#   FLOOR=1 scripts/measure-desktop.sh            the platform's floor: scripts/webkit-floor.c,
#                                                 the smallest WebKitGTK window with the app's settings
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-5}
idle=${IDLE:-10}
app=${APP:-}
if [ -n "${FLOOR:-}" ]; then
  mkdir -p target
  cc -O2 -Wall -Werror scripts/webkit-floor.c -o target/webkit-floor $(pkg-config --cflags --libs webkit2gtk-4.1)
  app=target/webkit-floor
elif [ -z "$app" ]; then
  cargo build --release --locked -q -p gatehouse-desktop
  app=target/release/gatehouse-desktop
fi

# The process and all its descendants.
tree() {
  echo "$1"
  local child
  for child in $(pgrep -P "$1" || true); do tree "$child"; done
}

# Sums a field (kB) over the given processes: Pss from smaps_rollup, VmRSS from status.
sum_kb() {
  local field=$1 file=$2 total=0 pid value
  shift 2
  for pid in "$@"; do
    value=$(awk -v f="$field:" '$1 == f { print $2 }' "/proc/$pid/$file" 2>/dev/null || true)
    total=$((total + ${value:-0}))
  done
  echo "$total"
}

for i in $(seq 1 "$runs"); do
  tmp=$(mktemp -d)
  start=$(date +%s%N)
  XDG_DATA_HOME="$tmp/data" XDG_CONFIG_HOME="$tmp/config" XDG_CACHE_HOME="$tmp/cache" \
    GATEHOUSE_LOG=gatehouse_desktop=info "$app" --db "$tmp/gatehouse.db" >"$tmp/out" 2>"$tmp/err" &
  pid=$!
  for _ in $(seq 1 3000); do
    grep -q "page has loaded" "$tmp/err" && break
    sleep 0.005
  done
  loaded=$(date +%s%N)
  own=$(sed 's/\x1b\[[0-9;]*m//g' "$tmp/err" | grep -o 'ms=[0-9]*' | head -1 || true)
  sleep "$idle"
  mapfile -t pids < <(tree "$pid")
  rss=$(sum_kb VmRSS status "${pids[@]}")
  pss=$(sum_kb Pss smaps_rollup "${pids[@]}")
  names=$(for p in "${pids[@]}"; do
    echo "$(cat "/proc/$p/comm" 2>/dev/null) $(($(sum_kb Pss smaps_rollup "$p") / 1024))"
  done | awk '{printf "%s%s %s MB", sep, $1, $2; sep=", "}')
  echo "run $i: launch to page loaded $(((loaded - start) / 1000000)) ms (app's own clock: ${own:-none});" \
    "idle after ${idle}s: RSS $((rss / 1024)) MB, PSS $((pss / 1024)) MB over ${#pids[@]} processes (PSS: $names)"
  kill -TERM "$pid"
  wait "$pid" || true
  rm -rf "$tmp"
done
