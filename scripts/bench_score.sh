#!/usr/bin/env bash
# The README comparison (control, baseline and b.md over city_country, plain_city and
# not_weather) sampled with `run` (6 repeats, sequential, as the README runs it) and scored with
# `score`, one after the other on this machine: the wall time of each and their ratio. Run it on
# an idle machine; the figures go to docs/score.md with the CPU this prints.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench_common.sh
needs bench_score.sh lscpu
build_release
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
comparison=(--pack weather --variant packs/weather/variants/b.md --category city_country,plain_city,not_weather --output "$out")

seconds() { local start=$SECONDS; "$@" >/dev/null 2>&1; echo $((SECONDS - start)); }

sampled=$(seconds "$bin" run "${comparison[@]}" --repeats 6 --sequential --no-cache)
scored=$(seconds "$bin" score "${comparison[@]}")
echo "cpu: $cpu"
echo "sampled run (6 repeats, sequential): ${sampled} s"
echo "score: ${scored} s"
awk -v a="$sampled" -v b="$scored" 'BEGIN { if (b > 0) printf "score takes 1/%.1f of the sampled run\n", a / b }'
