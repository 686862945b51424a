#!/usr/bin/env bash
# Gates a skill PR: the checks its diff needs (`skilleval plan --strict`), carried out
# (`skilleval plan --run --fail-on worse`), the PR's one report copied to REPORT and, when PR is
# set and `gh` is installed, posted as a comment on the pull request. Run it in the clone, on the
# PR's branch; the flags after `--` go to every score and run (the model, --limit):
#
#   BASE_REF=origin/main bash scripts/pr-gate.sh -- --model model.gguf --limit 20
#
# BASE_REF   the revision the PR goes into (default: the merge base with the default branch)
# SKILLEVAL  the program (default: skilleval on PATH)
# OUTPUT     where the runs go (default: output); REPORT where the PR's report is copied
#            (default: pr-report.md); PR the pull request's number, for `gh pr comment`
# REPEATS    repeats of every run (default: run's own)
#
# Exit: 1 when a changed skill no pack measures, or a refused gate, stops it before any run;
# else the status of `plan --run` (3: a row is worse).
set -euo pipefail

skilleval="${SKILLEVAL:-skilleval}"
output="${OUTPUT:-output}"
report="${REPORT:-pr-report.md}"
base=()
if [ -n "${BASE_REF:-}" ]; then
  base=(--base "$BASE_REF")
fi
repeats=()
if [ -n "${REPEATS:-}" ]; then
  repeats=(--repeats "$REPEATS")
fi
if [ "${1:-}" = "--" ]; then
  shift
fi

"$skilleval" plan ${base[@]+"${base[@]}"} --strict
status=0
"$skilleval" plan ${base[@]+"${base[@]}"} --run --fail-on worse ${repeats[@]+"${repeats[@]}"} --output "$output" -- "$@" || status=$?

root="$(git rev-parse --show-toplevel)"
case "$output" in
  /*) ;;
  *) output="$root/$output" ;;
esac
written="$(ls -td "$output"/pr-*/ | head -n 1)report.md"
if [ ! -f "$written" ]; then
  echo "pr-gate: plan --run wrote no report (exit $status)" >&2
  exit $(( status == 0 ? 1 : status ))
fi
cp "$written" "$report"
echo "pr-gate: the PR's report: $report"
if [ -n "${PR:-}" ] && command -v gh >/dev/null 2>&1; then
  gh pr comment "$PR" --body-file "$report"
fi
exit "$status"
