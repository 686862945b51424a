#!/usr/bin/env bash
# The README comparison (control, baseline and b.md over city_country, plain_city and
# not_weather) sampled with `run` (6 repeats, sequential, as the README runs it) and scored with
# `score`, one after the other on this machine: the wall time of each and their ratio; then the
# limit of the score: the tokens it must compute (each arm's shared prefix once, then every
# sample's own tail and steps: `computed_tokens` in score.json) at the engine's bare prefill rate
# in the lanes score computes in (`score --bare-prefill-rate`, measured here), and score's time
# over that limit. Run it on an idle machine; the figures go to docs/score.md and
# docs/throughput.md with the CPU this prints.
#
#   bash scripts/bench_score.sh               # the whole comparison
#   LIMIT=6 bash scripts/bench_score.sh       # 6 samples, for a quick look (no sampled run)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench_common.sh
needs bench_score.sh lscpu jq awk
build_release
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
comparison=(--pack weather --variant packs/weather/variants/b.md --category city_country,plain_city,not_weather --output "$out")
if [ -n "${LIMIT:-}" ]; then
  comparison+=(--limit "$LIMIT")
fi

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

echo "cpu: $cpu"
sampled=""
if [ -z "${LIMIT:-}" ]; then
  start=$(now)
  "$bin" run "${comparison[@]}" --repeats 6 --sequential --no-cache >/dev/null 2>&1
  sampled=$(elapsed "$start")
  echo "sampled run (6 repeats, sequential): ${sampled} s"
fi
start=$(now)
"$bin" score "${comparison[@]}" --json >"$out/score.json" 2>/dev/null
scored=$(elapsed "$start")
computed=$(jq -r .computed_tokens "$out/score.json")
echo "score: ${scored} s, ${computed} tokens computed"
rate=$("$bin" score "${comparison[@]}" --bare-prefill-rate 2>/dev/null)
echo "bare prefill: $rate"
rate=${rate%% *}
awk -v s="$scored" -v a="$sampled" -v t="$computed" -v r="$rate" 'BEGIN {
  if (a != "" && s > 0) printf "score takes 1/%.1f of the sampled run\n", a / s
  limit = t / r
  printf "limit: %d tokens / %.1f tokens/s = %.1f s; score takes %.2fx the limit\n", t, r, limit, s / limit
}'
