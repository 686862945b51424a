"""BFCL v4's overall score, computed by BFCL's own leaderboard code, as fixtures for ours.

Run inside a venv holding bfcl-eval:  python scripts/bfcl/overall_agreement.py
Writes tests/data/bfcl/overall_agreement.jsonl: one line per case,
  {"scores": {category: {"accuracy", "total_count"}}, "overall", "non_live", "live",
   "irrelevance", "multi_turn", "agentic"}
where the scores are what `bfcl evaluate` records per category and the rest is what
`generate_leaderboard_csv` computes from them (the five groups and their weighted sum),
read before it is rounded for the CSV.
"""

import json
import os
import random
import sys
import tempfile
import types
from pathlib import Path

os.environ.setdefault("BFCL_PROJECT_ROOT", str(Path(tempfile.gettempdir()) / "bfcl_project_root"))


class _ModelConfig:
    """The leaderboard reads only these fields of a model's configuration."""

    display_name = url = org = license = "local"
    input_price = output_price = cost_per_hour = None


# BFCL's model table imports every API client it supports; the aggregation needs one row of it.
_model_config = types.ModuleType("bfcl_eval.constants.model_config")
_model_config.MODEL_CONFIG_MAPPING = {"Qwen/Qwen3-8B": _ModelConfig()}
sys.modules["bfcl_eval.constants.model_config"] = _model_config

from bfcl_eval.eval_checker import eval_runner_helper as helper  # noqa: E402

# Every category the leaderboard reads (live_relevance is shown but does not weigh).
CATEGORIES = [
    "simple_python", "simple_java", "simple_javascript", "multiple", "parallel",
    "parallel_multiple", "irrelevance", "live_simple", "live_multiple", "live_parallel",
    "live_parallel_multiple", "live_irrelevance", "live_relevance", "multi_turn_base",
    "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context",
    "web_search_base", "web_search_no_snippet", "memory_kv", "memory_vector", "memory_rec_sum",
]
# The vendored categories `skilleval bench` runs.
VENDORED = [
    "simple_python", "simple_java", "simple_javascript", "multiple", "parallel",
    "parallel_multiple", "irrelevance", "live_simple", "live_multiple", "live_parallel",
    "live_parallel_multiple", "live_irrelevance", "live_relevance",
]
MODEL = "Qwen_Qwen3-8B"
OUT = Path(__file__).resolve().parents[2] / "tests" / "data" / "bfcl" / "overall_agreement.jsonl"
CASES = 40


def leaderboard_groups(scores):
    """Runs BFCL's aggregation and returns the weighted sum's inputs and result."""
    captured = {}
    original = helper.calculate_percentage_weighted_accuracy

    def capture(accuracy_dict_list, weights, display_na_if_category_missing=True):
        result = original(accuracy_dict_list, weights, display_na_if_category_missing)
        captured["groups"] = [d["accuracy"] for d in accuracy_dict_list]
        captured["weights"] = weights
        captured["overall"] = result["accuracy"]
        return result

    helper.calculate_percentage_weighted_accuracy = capture
    try:
        table = {MODEL: {c: dict(v) for c, v in scores.items()}}
        with tempfile.TemporaryDirectory() as out:
            helper.generate_leaderboard_csv(table, Path(out))
    finally:
        helper.calculate_percentage_weighted_accuracy = original
    assert captured["weights"] == [10, 10, 10, 30, 40], captured["weights"]
    non_live, live, irrelevance, multi_turn, agentic = captured["groups"]
    return {
        "overall": captured["overall"], "non_live": non_live, "live": live,
        "irrelevance": irrelevance, "multi_turn": multi_turn, "agentic": agentic,
    }


def score(rng, total):
    correct = rng.randint(0, total)
    return {"accuracy": correct / total, "total_count": total}


def cases(rng):
    # Shapes a bench run has: one category, the vendored ones, all of them, none that weigh.
    fixed = [["simple_python"], ["live_relevance"], ["live_simple"], VENDORED, CATEGORIES,
             ["live_parallel", "live_multiple"], ["irrelevance", "live_irrelevance"]]
    for chosen in fixed:
        yield chosen
    while True:
        pool = VENDORED if rng.random() < 0.6 else CATEGORIES
        yield rng.sample(pool, rng.randint(1, len(pool)))


def main():
    rng = random.Random(20261205)
    lines = []
    for chosen in cases(rng):
        if len(lines) == CASES:
            break
        scores = {c: score(rng, rng.choice([1, 3, 10, 16, 50, 258])) for c in chosen}
        line = {"scores": scores}
        line.update(leaderboard_groups(scores))
        lines.append(line)
    OUT.write_text("".join(json.dumps(line) + "\n" for line in lines))
    print(f"{len(lines)} cases -> {OUT}")


if __name__ == "__main__":
    main()
