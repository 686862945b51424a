"""Renders prompts with BFCL's own prompting code, as fixtures for the Rust renderer.

Run inside a venv holding bfcl-eval:  python scripts/bfcl/render_prompts.py
Writes tests/data/bfcl/prompts.jsonl: one line per entry, {"id", "category", "messages"}.
The Java and JavaScript entries, whose function documents BFCL rewrites, come last.
"""

import copy
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bfcl_shim  # noqa: F401  (must come before bfcl_eval)

from bfcl_eval.model_handler.utils import system_prompt_pre_processing_chat_model
from bfcl_eval.utils import load_dataset_entry

CATEGORIES = [
    "simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance",
    "live_simple", "live_multiple", "live_parallel", "live_parallel_multiple",
    "live_irrelevance", "live_relevance",
]
REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "tests" / "data" / "bfcl" / "prompts.jsonl"
PER_CATEGORY = 4
# Rewritten documents: list types lose their items, JavaScript dicts their properties.
LANGUAGE_CATEGORIES = ["simple_java", "simple_javascript"]


def interesting(entry):
    """Entries that exercise the merge with a system turn, escapes and odd floats."""
    first_turn = entry["question"][0]
    docs = json.dumps(entry["function"])
    return (
        first_turn[0]["role"] == "system"
        or any(m["role"] == "assistant" for m in first_turn)
        or "\\u" in docs
        or "e-" in docs
        or "\\n" in docs
    )


def rewritten(entry):
    """Entries whose parameters BFCL rewrites beyond the type: lists and dicts with a schema."""
    for function in entry["function"]:
        for details in function["parameters"]["properties"].values():
            if details["type"] in ("Array", "ArrayList", "array") or "properties" in details:
                return True
    return False


def main():
    lines = []
    for category in CATEGORIES + LANGUAGE_CATEGORIES:
        entries = load_dataset_entry(category)
        chosen = entries[:PER_CATEGORY]
        chosen += [e for e in entries[PER_CATEGORY:] if interesting(e)][:PER_CATEGORY]
        if category in LANGUAGE_CATEGORIES:
            raw = {e["id"]: e for e in load_dataset_entry(category, include_language_specific_hint=False)}
            chosen += [e for e in entries[PER_CATEGORY:] if rewritten(raw[e["id"]]) and e not in chosen][:PER_CATEGORY * 2]
        for entry in chosen:
            entry = copy.deepcopy(entry)
            messages = system_prompt_pre_processing_chat_model(
                entry["question"][0], entry["function"], entry["id"]
            )
            lines.append({"id": entry["id"], "category": category, "messages": messages})
    with OUT.open("w", encoding="utf-8") as out:
        for line in lines:
            out.write(json.dumps(line, ensure_ascii=False) + "\n")
    print(f"wrote {len(lines)} prompts to {OUT}")


if __name__ == "__main__":
    main()
