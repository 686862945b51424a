"""Records what BFCL's own loop sends a prompting model in the memory categories, as fixtures.

Run with bfcl-eval importable (with rank_bm25, numpy and overrides):
  PYTHONPATH=/path/to/bfcl-eval python3 -s scripts/bfcl/memory_conversations.py
Writes tests/data/bfcl/memory_conversations.jsonl, one memory category a line:
  {"category", "ids", "entries": [{"id", "replies", "steps", "result"}, ...], "snapshot"}
`ids` are the questions asked; `entries` are every conversation BFCL ran for them, in its order:
the five prerequisite conversations of the notetaker scenario, then the questions. `replies`
are the scripted replies in the order the loop consumed them, `steps[k]` the message list sent
at the k-th query, `result` what the loop returned (one list of step replies per turn).
`snapshot` is the memory BFCL saved after the last prerequisite (`notetaker_final.json`).

How: entries come from load_dataset_entry (prerequisites included) with
populate_initial_settings_for_memory_test_cases pointing the snapshots at a temporary result
folder, in sort_key order (prerequisites first), each run through
BaseHandler.inference_multi_turn_prompting of the OSS prompting handler, answering from a
queue of scripted replies. The script writes memory in two prerequisites, makes one call that
fails in another, and answers the questions: one after reading the memory, one from the memory
in its prompt, one wrongly.
"""

import contextlib
import copy
import importlib.util
import io
import json
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bfcl_shim  # noqa: F401  (must come before bfcl_eval)

if importlib.util.find_spec("overrides") is None:
    sys.exit("memory_conversations.py needs the real `overrides` package (BFCL's memory backends use it)")

from overrides import override  # noqa: E402
from bfcl_eval.model_handler.local_inference.base_oss_handler import OSSHandler  # noqa: E402
from bfcl_eval.utils import (  # noqa: E402
    load_dataset_entry,
    populate_initial_settings_for_memory_test_cases,
    sort_key,
)

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "tests" / "data" / "bfcl" / "memory_conversations.jsonl"

SCENARIO = "notetaker"
QUESTIONS = [130, 131, 132]
NOTED = "Noted."

# Per backend: what prerequisite k writes in its first turn, a call that fails, and the
# questions' replies (None: answer without a call).
CALLS = {
    "memory_kv": {
        "writes": {
            0: "[archival_memory_add(key='budget_report', value='Finalize the Q1 budget report before Friday.')]",
            3: "[core_memory_add(key='daycare', value='Drop-off at 08:00 AM, pick-up at 5 PM, payment due Friday.')]",
        },
        "failing": "[core_memory_add(key='Bad Key', value='not snake case')]",
        "read": "[core_memory_retrieve(key='daycare')]",
    },
    "memory_rec_sum": {
        "writes": {
            0: "[memory_append(text='Finalize the Q1 budget report before Friday. ')]",
            3: "[memory_append(text='Daycare: drop-off at 08:00 AM, pick-up at 5 PM, payment due Friday. ')]",
        },
        "failing": "[memory_replace(old_text='not in memory', new_text='x')]",
        "read": "[memory_retrieve()]",
    },
}
FAILING_IN = 4  # the prerequisite whose first turn makes the failing call


def answer(text):
    return "{'answer': " + repr(text) + ", 'context': 'From my memory.'}"


def replies_for(category, entry, question_index):
    calls = CALLS[category]
    if "prereq" in entry["id"]:
        k = int(entry["id"].rsplit("-", 1)[1])
        replies = []
        for turn in range(len(entry["question"])):
            if turn == 0 and k in calls["writes"]:
                replies += [calls["writes"][k], NOTED]
            elif turn == 0 and k == FAILING_IN:
                replies += [calls["failing"], NOTED]
            else:
                replies.append(NOTED)
        return replies
    return [
        [calls["read"], answer("08:00 AM")],
        [answer("Friday")],
        [answer("I do not know")],
    ][question_index]


class ScriptedHandler(OSSHandler):
    """BFCL's prompting OSS handler, answering from a queue and recording each query."""

    def __init__(self, model_name):
        super().__init__(model_name, temperature=0.001, registry_name=model_name, is_fc_model=False)
        self.queue, self.consumed, self.steps = [], [], []

    @override
    def _query_prompting(self, inference_data: dict):
        self.steps.append(copy.deepcopy(inference_data["message"]))
        reply = self.queue.pop(0)
        self.consumed.append(reply)
        return reply, 0.0

    @override
    def _parse_query_response_prompting(self, api_response: Any) -> dict:
        return {"model_responses": api_response, "input_token": 0, "output_token": 0}


def record_category(category, result_root):
    wanted = {f"{category}_{n}-{SCENARIO}-{n - QUESTIONS[0]}" for n in QUESTIONS}
    entries = [
        e for e in load_dataset_entry(category)
        if e["id"] in wanted or ("prereq" in e["id"] and e.get("scenario") == SCENARIO)
    ]
    assert len(entries) == 5 + len(QUESTIONS), [e["id"] for e in entries]
    model_name = f"memory-fixture-{category}"
    model_result_dir = result_root / model_name
    entries = sorted(populate_initial_settings_for_memory_test_cases(entries, model_result_dir), key=sort_key)
    handler = ScriptedHandler(model_name)
    records = []
    question_index = 0
    for entry in entries:
        is_question = "prereq" not in entry["id"]
        handler.queue = replies_for(category, entry, question_index)
        handler.consumed, handler.steps = [], []
        with contextlib.redirect_stdout(io.StringIO()):  # the loop prints a banner per step
            result, _ = handler.inference_multi_turn_prompting(
                copy.deepcopy(entry), include_input_log=False, exclude_state_log=True
            )
        assert not handler.queue, (entry["id"], handler.queue)
        records.append({"id": entry["id"], "replies": handler.consumed, "steps": handler.steps,
                        "result": result})
        question_index += is_question
    backend = category[len("memory_"):]
    snapshot_file = model_result_dir / "agentic" / "memory" / backend / "memory_snapshot" / f"{SCENARIO}_final.json"
    snapshot = json.loads(snapshot_file.read_text(encoding="utf-8"))
    return {"category": category, "ids": sorted(wanted), "entries": records, "snapshot": snapshot}


def main():
    with tempfile.TemporaryDirectory(prefix="bfcl_memory_conv_") as scratch:
        lines = [record_category(category, Path(scratch)) for category in CALLS]
    OUT.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    print(f"wrote {len(lines)} categories to {OUT.relative_to(REPO)}")
    for line in lines:
        steps = sum(len(e["steps"]) for e in line["entries"])
        print(f"  {line['category']}: {len(line['entries'])} conversations, {steps} queries; "
              f"snapshot {json.dumps(line['snapshot'])[:160]}")


if __name__ == "__main__":
    main()
