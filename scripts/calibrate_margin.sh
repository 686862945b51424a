#!/usr/bin/env bash
# The calibration of score's margin (docs/score.md, "Calibration"): every shipped pack scored
# with its neutral paraphrases (variants/neutral-*.md, written before any was scored, and the
# packs' older neutral rewordings) beside its planted wordings, the planted ones expected to keep
# a verdict and no neutral one to get any. Prints, per pack and wording, its class and the rows
# called better or worse, then the false-verdict count. Extra arguments go to every `score` (for
# example `--margin 3` to see what another margin would call, or `--draws 8`).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench_common.sh
needs calibrate_margin.sh lscpu
build_release
out="${CALIBRATION_OUT:-$(mktemp -d)}"
mkdir -p "$out"
echo "cpu: $cpu"
echo "score folders: $out"

# pack: neutral wordings | planted wordings
declare -A neutral planted
neutral[weather]="reworded.md neutral-synonyms.md neutral-restructured.md neutral-plain.md"
planted[weather]="b.md no-call.md drops-place.md"
neutral[flights]="reworded.md neutral-synonyms.md neutral-restructured.md neutral-plain.md"
planted[flights]="skips-the-question.md"
neutral[notes]="reworded.md neutral-synonyms.md neutral-restructured.md neutral-plain.md"
planted[notes]="no-confirmation.md"
neutral[timetable]="neutral-synonyms.md neutral-restructured.md neutral-plain.md"
planted[timetable]="terse.md"
neutral[builds]="neutral-synonyms.md neutral-restructured.md neutral-plain.md"
planted[builds]="answers-from-the-cut.md"
neutral[routing]="neutral-synonyms.md neutral-restructured.md neutral-plain.md"
planted[routing]="misleading.md sharper.md"

false_verdicts=0
neutral_count=0
failed=0
for pack in ${CALIBRATION_PACKS:-builds timetable flights notes routing weather}; do
  args=()
  for v in ${neutral[$pack]} ${planted[$pack]}; do args+=(--variant "packs/$pack/variants/$v"); done
  "$bin" score --pack "$pack" "${args[@]}" --output "$out/$pack" --json "$@" >"$out/$pack.json" 2>"$out/$pack.err" \
    || { echo "$pack: score failed: $(tail -1 "$out/$pack.err")"; failed=$((failed + 1)); continue; }
  for v in ${neutral[$pack]} ${planted[$pack]}; do
    class=planted
    [[ " ${neutral[$pack]} " == *" $v "* ]] && class=neutral
    called=$(python3 - "$out/$pack.json" "$v" <<'PY'
import json, sys
summary = json.load(open(sys.argv[1]))
for c in summary["comparisons"]:
    if c["name"] != sys.argv[2]:
        continue
    rows = [f'{r["step"]}:{r["category"] or "all"} {r["verdict"]} {100*r["difference"]:+.1f}pp'
            for r in c["rows"] if r["verdict"] in ("better", "worse")]
    print("; ".join(rows))
PY
)
    echo "$pack $v ($class): ${called:-no verdict}"
    if [[ $class == neutral ]]; then
      neutral_count=$((neutral_count + 1))
      [[ -n $called ]] && false_verdicts=$((false_verdicts + 1))
    fi
  done
done
echo "neutral wordings with a verdict: $false_verdicts of $neutral_count"
[[ $failed == 0 ]] || { echo "$failed packs could not be scored"; exit 1; }
