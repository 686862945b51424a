#!/usr/bin/env bash
# The README's command at several batch widths (--parallel) on one machine: units per second,
# wall time and peak memory of each, and whether two runs at the same width write the same
# transcripts.
#
#   bash scripts/bench_width.sh                       # widths 16 24 32 48, two repeats, two rounds
#   WIDTHS="16 32" REPEATS=6 ROUNDS=1 bash scripts/bench_width.sh
#
# A machine's speed drifts over half an hour (one width-16 run here took 530 s on one day and
# 750 s on the next), so the widths are interleaved: round 1 runs them in order, round 2 in
# reverse, and each width's figure is the mean of its rounds, which cancels a steady drift. The
# second round is also the replay check: every unit's rounds and verdict must equal the first's.
# Every run uses --no-cache, so none takes its baseline from another.
set -euo pipefail
cd "$(dirname "$0")/.."

WIDTHS="${WIDTHS:-16 24 32 48}"
REPEATS="${REPEATS:-2}"
ROUNDS="${ROUNDS:-2}"
CATEGORIES="${CATEGORIES:-city_country,plain_city,not_weather}"
VARIANT="${VARIANT:-packs/weather/variants/b.md}"
OUT="${OUT:-$(mktemp -d)}"
mkdir -p "$OUT"
source scripts/bench_common.sh
needs bench_width jq bc /usr/bin/time
build_release
echo "cpu: $cpu ($(nproc) cores) · repeats $REPEATS · rounds $ROUNDS · output $OUT"

run() { # name, width
  local name="$1" width="$2"
  /usr/bin/time -f "%e %M" -o "$OUT/$name.time" "$bin" run --pack weather \
    --variant "$VARIANT" --category "$CATEGORIES" --repeats "$REPEATS" --no-cache \
    --parallel "$width" --output "$OUT/$name" >"$OUT/$name.log" 2>&1
  read -r wall rss <"$OUT/$name.time"
  echo "  $name: wall ${wall}s, peak $((rss / 1024)) MiB"
}

# Each unit's key, rounds and verdict, in key order: what must replay exactly.
units() {
  jq -c '[.sample_id, .arm, .repeat, [.transcript.rounds[].raw], .judgement.passed]' \
    "$(ls -d "$OUT/$1"/*/ | head -1)journal.jsonl" | sort
}

order="$WIDTHS"
for round in $(seq 1 "$ROUNDS"); do
  echo "round $round"
  for width in $order; do run "w$width-r$round" "$width"; done
  order="$(echo "$order" | tr ' ' '\n' | tac | tr '\n' ' ')"
done

echo "width  units  wall s (rounds)      units/s  peak MiB  replay"
for width in $WIDTHS; do
  walls="" sum=0 peak=0
  for round in $(seq 1 "$ROUNDS"); do
    read -r wall rss <"$OUT/w$width-r$round.time"
    walls="$walls $wall"
    sum="$(echo "$sum + $wall" | bc -l)"
    [ "$rss" -gt "$peak" ] && peak="$rss"
  done
  count="$(units "w$width-r1" | grep -c .)"
  replay="one round"
  if [ "$ROUNDS" -gt 1 ]; then
    if cmp -s <(units "w$width-r1") <(units "w$width-r2"); then
      replay="identical"
    else
      replay="DIFFERS in $(diff <(units "w$width-r1") <(units "w$width-r2") | grep -c '^<') units"
    fi
  fi
  printf '%5s  %5s  %-20s %7.2f  %8d  %s\n' "$width" "$count" "${walls# }" \
    "$(echo "$count * $ROUNDS / $sum" | bc -l)" "$((peak / 1024))" "$replay"
done
