#!/usr/bin/env bash
# The README's command fixed and sequential, one after the other on one machine, with the units,
# wall time, peak memory and verdicts of both. Figures are only comparable on an otherwise idle
# machine: check `top`.
#
#   bash scripts/bench_sequential.sh                # six repeats, as the README runs it
#   REPEATS=4 PARALLEL=24 bash scripts/bench_sequential.sh
#
# Both runs use --no-cache, so that neither takes its baseline from the other; the sequential run
# is the same command with --sequential. The verdicts are every row of the wording and skill-effect
# comparisons that is called (better, worse or mixed), from each run's summary.json.
set -euo pipefail
cd "$(dirname "$0")/.."

REPEATS="${REPEATS:-6}"
CATEGORIES="${CATEGORIES:-city_country,plain_city,not_weather}"
VARIANT="${VARIANT:-packs/weather/variants/b.md}"
PARALLEL="${PARALLEL:-}"
OUT="${OUT:-$(mktemp -d)}"
mkdir -p "$OUT"
source scripts/bench_common.sh
needs bench_sequential jq /usr/bin/time
build_release
echo "cpu: $cpu ($(nproc) cores) · repeats $REPEATS · output $OUT"

run() { # name, extra flags...
  local name="$1"
  shift
  local log="$OUT/$name.log"
  local parallel=()
  [ -n "$PARALLEL" ] && parallel=(--parallel "$PARALLEL")
  /usr/bin/time -f "%e %M" -o "$OUT/$name.time" "$bin" run --pack weather \
    --variant "$VARIANT" --category "$CATEGORIES" --repeats "$REPEATS" --no-cache \
    --output "$OUT/$name" "${parallel[@]}" "$@" >"$log" 2>&1
  local dir
  dir="$(ls -d "$OUT/$name"/*/ | head -1)"
  local units wall rss
  units="$(grep -c . "$dir/journal.jsonl")"
  read -r wall rss <"$OUT/$name.time"
  echo "$name: $units units · wall ${wall}s · peak memory $((rss / 1024)) MiB · $(jq -r '.sequential // empty | "stopped after \(.looks[-1].repeats) of \(.planned_repeats) repeats (\(.stopped))"' "$dir/manifest.json")"
  jq -r '[(.skill_effect // empty | "skill effect", (.categories[], .total, .laws[] | select(.verdict == "better" or .verdict == "worse" or .verdict == "mixed") | "  \(.name) \(.verdict)")),
          (.wording | "wording", (.categories[], .total, .laws[] | select(.verdict == "better" or .verdict == "worse" or .verdict == "mixed") | "  \(.name) \(.verdict)"))] | .[]' \
    "$dir/summary.json" | tee "$OUT/$name.verdicts"
}

run fixed
run sequential --sequential
if diff -q "$OUT/fixed.verdicts" "$OUT/sequential.verdicts" >/dev/null; then
  echo "verdicts: the same"
else
  echo "verdicts: differ (fixed < > sequential):"
  diff "$OUT/fixed.verdicts" "$OUT/sequential.verdicts" || true
fi
