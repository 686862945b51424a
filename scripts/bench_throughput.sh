#!/usr/bin/env bash
# Throughput of `skilleval run` on the weather pack: one sample at a time (--parallel 1) against
# the batched scheduler (--parallel $PARALLEL), their ratio, how many transcripts differ between
# the two, and a bare batched decode loop (no harness, same model, same batch size) as a
# reference. Figures are only meaningful on an otherwise idle machine: check `top` first.
#
#   scripts/bench_throughput.sh                 # 24 samples × 2 arms × 1 repeat
#   LIMIT=48 REPEATS=2 PARALLEL=16 scripts/bench_throughput.sh
set -euo pipefail
cd "$(dirname "$0")/.."

LIMIT="${LIMIT:-24}"
REPEATS="${REPEATS:-1}"
PARALLEL="${PARALLEL:-8}"
PACK="${PACK:-weather}"
VARIANT="${VARIANT:-packs/weather/variants/b.md}"
command -v jq >/dev/null || { echo "bench_throughput: needs jq (apt-get install jq)" >&2; exit 2; }

cargo build --release --quiet
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

# Runs the pack with --parallel $1 into $out/p$1 and prints the run folder.
run() {
  local dir="$out/p$1"
  ./target/release/skilleval run --pack "$PACK" --variant "$VARIANT" --limit "$LIMIT" \
    --repeats "$REPEATS" --parallel "$1" --output "$dir" --json >/dev/null
  echo "$dir/$(ls "$dir")"
}

profile_line() {
  jq -r '"\(.units) units in \(.wall_secs*10|round/10)s: \(.samples_per_sec*100|round/100) samples/s, prefill \(.prefill_tokens_per_sec|round) tok/s, decode \(.decode_tokens_per_sec|round) tok/s, prefix cache \(.prefix_hits)/\(.generations), peak \((.peak_memory_bytes // 0)/1048576|round) MiB"' "$1/profile.json"
}

# One line per unit: its key and the raw text of every round.
transcripts() {
  jq -c '[.sample_id, .arm, .repeat, [.transcript.rounds[].raw]]' "$1/journal.jsonl" | sort
}

echo "pack $PACK · $LIMIT samples × 2 arms × $REPEATS repeat(s) · $(nproc) cores"
sequential="$(run 1)"
echo "--parallel 1:         $(profile_line "$sequential")"
batched="$(run "$PARALLEL")"
echo "--parallel $PARALLEL:         $(profile_line "$batched")"
jq -rn --slurpfile a "$sequential/profile.json" --slurpfile b "$batched/profile.json" \
  '"speed-up:             \($b[0].samples_per_sec / $a[0].samples_per_sec * 100 | round / 100)×"'

units="$(transcripts "$sequential" | wc -l)"
differ="$(diff <(transcripts "$sequential") <(transcripts "$batched") | grep -c '^<' || true)"
echo "transcripts differing: $differ of $units units"

for sequences in 1 "$PARALLEL"; do
  BENCH_SEQUENCES="$sequences" BENCH_CTX=4096 \
    cargo test --release --quiet --test scheduler_bench -- --ignored --nocapture 2>/dev/null \
    | grep '^bare batched decode' | sed 's/^/reference: /'
done
