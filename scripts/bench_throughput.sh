#!/usr/bin/env bash
# Throughput of the batched engine, side by side with llama.cpp's own batched benchmark, in one
# run on one machine. Figures are only comparable on an otherwise idle machine: check `top`.
#
#   bash scripts/bench_throughput.sh              # the README's command at 1 repeat
#   REPEATS=6 bash scripts/bench_throughput.sh    # the README's command as it stands
#
# It prints
#   (a) llama-batched-bench (llama.cpp's tools/batched-bench, built by
#       scripts/build_llama_tools.sh) at the run's context and 1, 8 and 16 sequences;
#   (b) the engine's bare decode loop (no harness) at 1 and 16 sequences;
#   (c) the README's command at --parallel 1 --no-prefix-cache, at --parallel 1 and at the
#       default --parallel, each with its tokens and seconds in prompt and generate work;
#   (d) the peer a user would pick instead: llama-server (built by the same script) with one slot
#       per sequence and its prompt cache, fed the default run's very prompts (its --prompt-log)
#       by scripts/server_peer.py, one client thread per worker;
# then the ratios that docs/throughput.md holds the engine to, and how many transcripts differ
# between --parallel 1 and the default.
set -euo pipefail
cd "$(dirname "$0")/.."

REPEATS="${REPEATS:-1}"
CATEGORIES="${CATEGORIES:-city_country,plain_city,not_weather}"
VARIANT="${VARIANT:-packs/weather/variants/b.md}"
CTX="${CTX:-4096}"
for tool in jq curl python3; do
  command -v "$tool" >/dev/null || { echo "bench_throughput: needs $tool (apt-get install $tool)" >&2; exit 2; }
done

cargo build --release --quiet
tools="$(bash scripts/build_llama_tools.sh)"
# Run folders and the llama.cpp table stay here for a second look; the next run replaces them.
out="target/bench_throughput"
rm -rf "$out"
mkdir -p "$out"

# Runs the README's command into $out/$1 with the remaining arguments; prints the run folder.
run() {
  local dir="$out/$1"
  shift
  ./target/release/skilleval run --pack weather --variant "$VARIANT" --category "$CATEGORIES" \
    --repeats "$REPEATS" --ctx "$CTX" --output "$dir" --json "$@" >/dev/null
  echo "$dir/$(ls "$dir")"
}

# tokens, seconds and tokens/s of one kind of work in a run's profile.json.
row() {
  jq -r --arg name "$2" "$3"' | "\($name)|\(.[0])|\(.[1]*10|round/10)|\(if .[1] > 0 then .[0]/.[1] | round else 0 end)"' \
    "$1/profile.json"
}
one_sequence_rows() {
  row "$1" "$2, prefill" '[.prompt_tokens - .cached_prompt_tokens, .prefill_secs]'
  row "$1" "$2, decode" '[.generated_tokens, .decode_secs]'
}
engine_rows() {
  row "$1" "$2, prompt calls" '[.engine.prefill_call_tokens, .engine.prefill_secs]'
  row "$1" "$2, generate calls" '[.engine.decode_only_tokens, .engine.decode_secs]'
}
rate() { jq -r "$2 as \$r | \$r[0] / \$r[1]" "$1/profile.json"; }

echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') · $(nproc) cores"
echo "workload: weather, $CATEGORIES, $VARIANT, $REPEATS repeat(s), --ctx $CTX per sequence"

scratch="$(run scratch --parallel 1 --no-prefix-cache)"
sequential="$(run sequential --parallel 1)"
batched="$(run batched --prompt-log "$out/prompts.jsonl")"
parallel="$(jq -r .parallel "$batched/profile.json")"
model="$(jq -r .backend.model_path "$batched/manifest.json")"
# The context the run's prompts sit at: their mean length.
context="$(jq -r '.prompt_tokens / .generations | round' "$batched/profile.json")"

echo
echo "(a) llama-batched-bench, prompt $context tokens, 32 generated, 1/8/$parallel sequences"
"$tools/llama-batched-bench" -m "$model" -c $((parallel * CTX)) -b 2048 -ub 512 \
  -npp "$context" -ntg 32 -npl "1,8,$parallel" -t "$(nproc)" 2>/dev/null | tee "$out/llama-batched-bench.txt" |
  grep -E '^\|'
# One figure of llama-batched-bench's table: the row of $1 sequences, column $2 (the columns are
# PP TG B N_KV T_PP S_PP T_TG S_TG T S, and awk counts the leading "|" as field 1).
llama_figure() {
  awk -F'|' -v b="$1" -v col="$2" '$4+0 == b { gsub(/ /, "", $col); print $col }' "$out/llama-batched-bench.txt"
}
llama_tg="$(llama_figure "$parallel" 9)"
llama_tg1="$(llama_figure 1 9)"
llama_pp1="$(llama_figure 1 7)"

echo
echo "(b) the engine's bare decode loop, prompt $context tokens"
bare_rate() {
  BENCH_SEQUENCES="$1" BENCH_CTX="$CTX" BENCH_PROMPT_TOKENS="$context" \
    cargo test --release --quiet --test scheduler_bench -- --ignored --nocapture 2>/dev/null |
    sed -n 's/^bare batched decode: .*: \([0-9.]*\) tokens\/s$/\1/p'
}
bare1="$(bare_rate 1)"
bare="$(bare_rate "$parallel")"
echo "1 sequence: $bare1 tokens/s · $parallel sequences: $bare tokens/s"

echo
echo "(c) the README's command"
{
  echo "run|tokens|seconds|tokens/s"
  one_sequence_rows "$scratch" "--parallel 1 --no-prefix-cache"
  one_sequence_rows "$sequential" "--parallel 1"
  engine_rows "$batched" "--parallel $parallel"
} | column -t -s '|'
for dir in "$scratch" "$sequential" "$batched"; do
  jq -r '"\(.parallel) sequences: \(.units) units in \(.wall_secs*10|round/10) s"' "$dir/profile.json"
done
jq -r '.engine | "fillers \(.filler_tokens) · stream copies \(.stream_copies) · decode calls \(.decode_calls)"' \
  "$batched/profile.json"

echo
echo "(d) llama-server, $parallel slots with its prompt cache, fed the same $(wc -l <"$out/prompts.jsonl") prompts"
port="${PEER_PORT:-18089}"
"$tools/llama-server" -m "$model" --host 127.0.0.1 --port "$port" -np "$parallel" -c $((parallel * CTX)) --swa-full \
  -t "$(nproc)" >"$out/llama-server.log" 2>&1 &
server_pid=$!
trap 'kill "$server_pid" 2>/dev/null || true' EXIT
for _ in $(seq 1 180); do
  curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break
  kill -0 "$server_pid" 2>/dev/null || { echo "llama-server exited:" >&2; tail -5 "$out/llama-server.log" >&2; exit 1; }
  sleep 1
done
python3 scripts/server_peer.py "$out/prompts.jsonl" "http://127.0.0.1:$port" | tee "$out/peer.json"
kill "$server_pid" 2>/dev/null || true
wait "$server_pid" 2>/dev/null || true
peer_wall="$(jq .wall_secs "$out/peer.json")"
engine_wall="$(jq .wall_secs "$batched/profile.json")"
sequential_wall="$(jq .wall_secs "$sequential/profile.json")"

prefill1="$(rate "$sequential" '[.prompt_tokens - .cached_prompt_tokens, .prefill_secs]')"
prompt_calls="$(rate "$batched" '[.engine.prefill_call_tokens, .engine.prefill_secs]')"
generate_calls="$(rate "$batched" '[.engine.decode_only_tokens, .engine.decode_secs]')"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "?" }'; }

echo
echo "ratios (targets in docs/throughput.md)"
echo "prompt calls at $parallel / one-sequence prefill:      $(ratio "$prompt_calls" "$prefill1")  (target >= 0.90)"
echo "generate calls at $parallel / bare loop at $parallel:         $(ratio "$generate_calls" "$bare")  (target >= 0.95)"
echo "generate calls at $parallel / llama-batched-bench S_TG:   $(ratio "$generate_calls" "$llama_tg")  (target >= 0.90)"
echo "bare loop at 1 / llama-batched-bench S_TG at 1:      $(ratio "$bare1" "$llama_tg1")"
echo "one-sequence prefill / llama-batched-bench S_PP at 1: $(ratio "$prefill1" "$llama_pp1")"
echo "units/s at $parallel / at 1: $(ratio "$(jq .samples_per_sec "$batched/profile.json")" "$(jq .samples_per_sec "$sequential/profile.json")")"
echo "README command at $parallel / at --parallel 1 (wall):    $(ratio "$sequential_wall" "$engine_wall")  (target >= 2.8)"
echo "README command / llama-server peer (wall):         $(ratio "$peer_wall" "$engine_wall")  (target >= 1.5)"
echo "peak memory at $parallel: $(jq '.peak_memory_bytes / 1048576 | round' "$batched/profile.json") MiB  (target <= 2048)"

# One line per unit: its key and the raw text of every round.
transcripts() {
  jq -c '[.sample_id, .arm, .repeat, [.transcript.rounds[].raw]]' "$1/journal.jsonl" | sort
}
units="$(transcripts "$sequential" | wc -l)"
differ="$(diff <(transcripts "$sequential") <(transcripts "$batched") | grep -c '^<' || true)"
echo "transcripts differing between --parallel 1 and $parallel: $differ of $units units"
