#!/usr/bin/env bash
# Fuzzes each of skilleval's parsers for SECONDS (default 30) with cargo-fuzz (libFuzzer), and
# prints the executions of each target. The fuzz crate (fuzz/) is outside the main build.
#
#   bash scripts/fuzz.sh 300            # every target, five minutes each
#   bash scripts/fuzz.sh 30 pack_loader # one target
#
# Only a stable toolchain is needed: the targets are built without a sanitizer (-s none), the
# one mode of cargo-fuzz whose flags stable rustc accepts; libFuzzer's coverage guidance
# (SanitizerCoverage) works all the same, and Rust's own checks (overflow, bounds, debug
# assertions) turn bugs into panics that libFuzzer reports. A crash is kept in
# fuzz/artifacts/<target>/; the regression tests of the crate replay them once fixed.
set -euo pipefail

seconds="${1:-30}"
shift || true
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root/fuzz"

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "cargo-fuzz is missing: cargo install cargo-fuzz --locked" >&2
    exit 1
fi

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(markup_calls json_tag_calls python_calls llama_json_calls mistral_calls tool_code_calls
        front_matter pack_loader journal_reader)
fi

# Seeds from the repository: real packs, skills, variants and journal lines.
seed() {
    local target="$1"
    shift
    mkdir -p "corpus/$target"
    for file in "$@"; do
        [ -f "$file" ] && cp "$file" "corpus/$target/seed-$(echo "$file" | tr '/' '_')"
    done
    return 0
}
shopt -s nullglob globstar
seed pack_loader "$root"/packs/*/pack.toml "$root"/tests/data/packs/*/pack.toml
seed front_matter "$root"/packs/**/SKILL.md "$root"/packs/*/variants/*.md "$root"/tests/data/packs/**/*.md
seed journal_reader "$root"/tests/data/journals/*.jsonl
seed markup_calls "$root"/fuzz/seeds/calls/*
seed json_tag_calls "$root"/fuzz/seeds/calls/*
seed python_calls "$root"/fuzz/seeds/calls/*
for target in llama_json_calls mistral_calls tool_code_calls; do
    seed "$target" "$root"/fuzz/seeds/calls/*
done

for target in "${targets[@]}"; do
    log="$(mktemp)"
    nice -n 19 cargo fuzz run -s none "$target" -- \
        -max_total_time="$seconds" -print_final_stats=1 >"$log" 2>&1 || {
        tail -40 "$log"
        echo "fuzz $target: crashed; the input is in fuzz/artifacts/$target/" >&2
        exit 1
    }
    execs="$(grep -m1 'stat::number_of_executed_units' "$log" | awk '{print $2}')"
    echo "$target: ${execs:-?} executions in ${seconds} s"
    rm -f "$log"
done
