"""Records the chat messages BFCL's own multi-turn loop sends a prompting model, as fixtures.

Run with bfcl-eval importable:  PYTHONPATH=/path/to/bfcl-eval python3 -s scripts/bfcl/multi_turn_conversations.py
Writes tests/data/bfcl/multi_turn_conversations.jsonl, one entry a line, sorted by category:
  {"id", "category", "replies", "steps", "result"}
`replies` are the scripted model replies in the order BFCL's loop consumed them; `steps[k]` is
the message list ({"role", "content"}, plus "name" on tool messages, as BFCL builds it) sent at
the k-th query, the one answered by `replies[k]`; `result` is the all_model_response the loop
returned: one list of step replies per turn it ran.

How: BFCL's loop is BaseHandler.inference_multi_turn_prompting; the prompting hooks it calls
(system prompt, user turns, held-out function turns, assistant and tool messages, the decoder)
are those of the OSS handler, OSSHandler. A subclass of it answers each query from a queue of
scripted replies instead of a server, after recording a deep copy of the messages. Entries come
from load_dataset_entry (function docs with the language hint, held-out docs of miss_func), a
deep copy per run. Each turn is scripted as: its ground-truth calls in one list, then "Done."
(prose, which BFCL fails to decode and so ends the turn); a turn whose ground truth is empty gets
"I cannot do that." alone. Variations: a fenced ``` list, an empty "[]" (ends the turn), and one
entry whose first turn repeats a harmless call 25 times: BFCL forces quit after 20 executed steps
(at the 21st), ending the entry, so only 21 of those replies are consumed.

BFCL's executor keeps API instances in module globals keyed by model name and entry id, so each
entry runs in a fresh Python process (`--run`), under a model name of its own as well.

Prints entries per category, steps per entry, and which entry was forced to quit.
"""

import contextlib
import copy
import importlib.util
import io
import json
import subprocess
import sys
import types
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bfcl_shim  # noqa: F401  (must come before bfcl_eval)

# `overrides` decorates the handler's methods: bfcl_shim's inert stand-in would replace them,
# so a missing `overrides` gets a pass-through one instead (as in multi_turn_agreement.py).
if importlib.util.find_spec("overrides") is None:
    _overrides = types.ModuleType("overrides")
    _overrides.override = _overrides.final = lambda func: func
    _overrides.EnforceOverrides = type("EnforceOverrides", (), {})
    sys.modules["overrides"] = _overrides

from bfcl_eval.constants.default_prompts import MAXIMUM_STEP_LIMIT
from overrides import override  # noqa: E402
from bfcl_eval.model_handler.local_inference.base_oss_handler import OSSHandler
from bfcl_eval.utils import load_dataset_entry, load_ground_truth_entry

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "tests" / "data" / "bfcl" / "multi_turn_conversations.jsonl"

DONE = "Done."
CANNOT = "I cannot do that."
FORCE_QUIT_REPEATS = 25

# (category, entry number, variation). Small entries; miss_func_11 and miss_func_50 hold out a
# function (turns 2 and 1). No multi-turn entry of BFCL v4 has a system message of its own.
PLAN = [
    ("multi_turn_base", 50, "plain"),            # one turn, two parallel calls in one step
    ("multi_turn_base", 144, "fenced"),          # turn 0's call list inside a ``` fence
    ("multi_turn_base", 11, "force_quit"),       # ls(a=True) 25 times in turn 0
    ("multi_turn_miss_func", 11, "plain"),       # held-out post_tweet in turn 2
    ("multi_turn_miss_func", 50, "plain"),       # held-out lockDoors in turn 1
    ("multi_turn_miss_func", 139, "empty"),      # last turn answered "[]"
    ("multi_turn_miss_param", 50, "plain"),
    ("multi_turn_miss_param", 139, "plain"),
    ("multi_turn_miss_param", 177, "plain"),
    ("multi_turn_long_context", 50, "plain"),
    ("multi_turn_long_context", 100, "plain"),
    ("multi_turn_long_context", 11, "plain"),
]


def turn_replies(calls, variation, turn_idx, last_turn):
    """The scripted replies of one turn, all of which the loop consumes (bar force quit)."""
    if not calls:
        return [CANNOT]
    listed = "[" + ", ".join(calls) + "]"
    if variation == "force_quit" and turn_idx == 0:
        return [listed] * FORCE_QUIT_REPEATS
    if variation == "fenced" and turn_idx == 0:
        return ["```\n" + listed + "\n```", DONE]
    if variation == "empty" and last_turn:
        return [listed, "[]"]
    return [listed, DONE]


def script(ground_truth, variation):
    turns = [turn_replies(calls, variation, i, i == len(ground_truth) - 1)
             for i, calls in enumerate(ground_truth)]
    if variation == "force_quit":
        assert len(ground_truth[0]) == 1, "force quit repeats a single harmless call"
    return [reply for turn in turns for reply in turn]


class ScriptedHandler(OSSHandler):
    """BFCL's prompting OSS handler, answering from a queue and recording each query."""

    def __init__(self, model_name, replies):
        super().__init__(model_name, temperature=0.001, registry_name=model_name, is_fc_model=False)
        self.queue = list(replies)
        self.consumed = []
        self.steps = []

    @override
    def _query_prompting(self, inference_data: dict):
        self.steps.append(copy.deepcopy(inference_data["message"]))
        reply = self.queue.pop(0)
        self.consumed.append(reply)
        return reply, 0.0

    @override
    def _parse_query_response_prompting(self, api_response: Any) -> dict:
        return {"model_responses": api_response, "input_token": 0, "output_token": 0}


def run_entry(spec):
    """Child process: run one entry through BFCL's loop and print its record as JSON."""
    entry = next(e for e in load_dataset_entry(spec["category"]) if e["id"] == spec["id"])
    handler = ScriptedHandler(spec["model_name"], spec["replies"])
    with contextlib.redirect_stdout(io.StringIO()):  # the loop prints a banner per step
        result, _metadata = handler.inference_multi_turn_prompting(
            copy.deepcopy(entry), include_input_log=False, exclude_state_log=True
        )
    record = {"id": spec["id"], "category": spec["category"], "replies": handler.consumed,
              "steps": handler.steps, "result": result, "left_in_queue": len(handler.queue)}
    print(json.dumps(record, ensure_ascii=False))


def check(record, variation, turns):
    replies, steps, result = record["replies"], record["steps"], record["result"]
    assert len(steps) == len(replies), record["id"]
    assert [r for turn in result for r in turn] == replies, record["id"]
    for messages in steps:
        for message in messages:
            expected = {"role", "content", "name"} if message["role"] == "tool" else {"role", "content"}
            assert set(message) == expected, (record["id"], message)
    if variation == "force_quit":
        assert len(result[0]) == MAXIMUM_STEP_LIMIT + 1 and len(result) == 1, record["id"]
        assert record["left_in_queue"] > 0, record["id"]
    else:
        assert record["left_in_queue"] == 0 and len(result) == turns, record["id"]


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--run":
        run_entry(json.loads(sys.argv[2]))
        return
    ground_truths = {}
    records, summary = [], []
    for index, (category, number, variation) in enumerate(PLAN):
        if category not in ground_truths:
            ground_truths[category] = {g["id"]: g["ground_truth"] for g in load_ground_truth_entry(category)}
        entry_id = f"{category}_{number}"
        ground_truth = ground_truths[category][entry_id]
        spec = {"category": category, "id": entry_id, "model_name": f"conversation-fixture-{index}",
                "replies": script(ground_truth, variation)}
        proc = subprocess.run([sys.executable, "-s", str(Path(__file__).resolve()), "--run", json.dumps(spec)],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            sys.exit(f"{entry_id} failed:\n{proc.stderr}")
        record = json.loads(proc.stdout.strip().splitlines()[-1])
        check(record, variation, len(ground_truth))
        summary.append((entry_id, variation, len(record["steps"]), len(record["result"]),
                        len(spec["replies"]), record.pop("left_in_queue")))
        records.append(record)
    with OUT.open("w", encoding="utf-8") as out:
        for record in records:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")

    print(f"wrote {len(records)} conversations to {OUT}")
    for category, count in Counter(r["category"] for r in records).items():
        print(f"  {category}: {count} entries")
    for entry_id, variation, steps, turns, scripted, left in summary:
        print(f"  {entry_id:28} {variation:10} steps={steps:3} turns={turns} "
              f"replies scripted={scripted} consumed={scripted - left}")
    for entry_id, variation, steps, turns, scripted, left in summary:
        if variation == "force_quit":
            print(f"forced to quit: {entry_id} after {steps} executed steps in turn 0, "
                  f"result has {turns} turn(s); {left} scripted replies left unconsumed")


if __name__ == "__main__":
    main()
