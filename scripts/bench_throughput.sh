#!/usr/bin/env bash
# Throughput of `skilleval run` on the weather pack: one sample at a time with no prefix reuse,
# one at a time with it, and the batched scheduler at the default --parallel (or $PARALLEL);
# the ratios; how many transcripts differ between one-at-a-time and batched; and a bare batched
# decode loop (no harness, same model, same batch size) as the reference the engine is held to.
# Figures are only meaningful on an otherwise idle machine: check `top` first.
#
#   scripts/bench_throughput.sh                 # 24 samples × 2 arms × 1 repeat
#   LIMIT=48 REPEATS=2 PARALLEL=16 scripts/bench_throughput.sh
set -euo pipefail
cd "$(dirname "$0")/.."

LIMIT="${LIMIT:-24}"
REPEATS="${REPEATS:-1}"
PARALLEL="${PARALLEL:-}"
PACK="${PACK:-weather}"
VARIANT="${VARIANT:-packs/weather/variants/b.md}"
command -v jq >/dev/null || { echo "bench_throughput: needs jq (apt-get install jq)" >&2; exit 2; }

cargo build --release --quiet
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

# Runs the pack into $out/$1 with the remaining arguments and prints the run folder.
run() {
  local dir="$out/$1"
  shift
  ./target/release/skilleval run --pack "$PACK" --variant "$VARIANT" --limit "$LIMIT" \
    --repeats "$REPEATS" --output "$dir" --json "$@" >/dev/null
  echo "$dir/$(ls "$dir")"
}

profile_line() {
  jq -r '"\(.units) units in \(.wall_secs*10|round/10)s: \(.samples_per_sec*100|round/100) samples/s, prefill \(.prefill_tokens_per_sec|round) tok/s, decode \(.decode_tokens_per_sec|round) tok/s, prefix cache \(.prefix_hits)/\(.generations), peak \((.peak_memory_bytes // 0)/1048576|round) MiB"' "$1/profile.json"
}

# The engine's own rates: generated tokens/s in calls that only generate, and every computed
# token (prompt and generated) per second of wall time.
engine_line() {
  jq -r '.engine | "engine: decode-only calls \(.decode_only_tokens / .decode_secs | round) tok/s, all computed tokens \(.batched_tokens) in \($wall|round)s = \(.batched_tokens / $wall | round) tok/s"' \
    --argjson wall "$(jq .wall_secs "$1/profile.json")" "$1/profile.json"
}

ratio() {
  jq -rn --slurpfile a "$1/profile.json" --slurpfile b "$2/profile.json" \
    '$b[0].samples_per_sec / $a[0].samples_per_sec * 100 | round / 100'
}

# One line per unit: its key and the raw text of every round.
transcripts() {
  jq -c '[.sample_id, .arm, .repeat, [.transcript.rounds[].raw]]' "$1/journal.jsonl" | sort
}

echo "pack $PACK · $LIMIT samples × 2 arms × $REPEATS repeat(s) · $(nproc) cores"
scratch="$(run scratch --parallel 1 --no-prefix-cache)"
echo "--parallel 1, no prefix cache: $(profile_line "$scratch")"
sequential="$(run sequential --parallel 1)"
echo "--parallel 1:                  $(profile_line "$sequential")"
batched="$(run batched ${PARALLEL:+--parallel "$PARALLEL"})"
parallel="$(jq -r .parallel "$batched/profile.json")"
echo "--parallel $parallel (default):     $(profile_line "$batched")"
echo "  $(engine_line "$batched")"
echo "speed-up over --parallel 1, no prefix cache: $(ratio "$scratch" "$batched")×"
echo "speed-up over --parallel 1:                  $(ratio "$sequential" "$batched")×"

units="$(transcripts "$sequential" | wc -l)"
differ="$(diff <(transcripts "$sequential") <(transcripts "$batched") | grep -c '^<' || true)"
echo "transcripts differing between --parallel 1 and $parallel: $differ of $units units"

for sequences in 1 "$parallel"; do
  BENCH_SEQUENCES="$sequences" BENCH_CTX=4096 BENCH_PROMPT_TOKENS=900 \
    cargo test --release --quiet --test scheduler_bench -- --ignored --nocapture 2>/dev/null \
    | grep '^bare batched decode' | sed 's/^/reference: /'
done
