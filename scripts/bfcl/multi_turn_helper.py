"""BFCL's own multi-turn machinery behind a JSON-lines pipe, for `skilleval bench`.

skilleval starts this with `python3 -s multi_turn_helper.py` (the `bfcl-eval` package on
PYTHONPATH, as `scripts/setup.sh --bfcl` installs it) and talks to it one JSON object a line:
each request on stdin gets exactly one reply on stdout, `{"error": "..."}` when it failed.

  {"op": "hello"}                             -> {"bfcl_eval": version, "max_steps": N}
  {"op": "start", "entry": {...}}             -> {"ok": true}   the entry's API instances, fresh
  {"op": "decode", "text": "..."}             -> {"calls": [...], "empty": bool} | {"undecodable": msg}
  {"op": "execute", "id": ..., "calls": [...]}-> {"results": [...]}
  {"op": "end", "id": ...}                    -> {"ok": true}   the instances dropped
  {"op": "holdout_message", "functions": [...]} -> {"text": "..."}
  {"op": "check", "entry": {...}, "ground_truth": [...], "result": ...}
                                              -> {"valid": bool, "error_type": ..., "error_message": ...}
  {"op": "quit"}

`entry` is the question line (`id`, `initial_config`, `involved_classes`). Every function here is
BFCL's: the decoder its prompting handlers use, its executor, its evaluator's per-entry check.
"""

import json
import os
import sys
import traceback
from pathlib import Path

# The protocol owns stdout; anything BFCL prints goes to stderr.
_protocol = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")
sys.stdout = sys.stderr

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bfcl_shim  # noqa: E402,F401  (must come before bfcl_eval)

from importlib.metadata import version  # noqa: E402

from bfcl_eval.constants.default_prompts import (  # noqa: E402
    DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_PROMPTING,
    MAXIMUM_STEP_LIMIT,
)
from bfcl_eval.eval_checker.eval_runner import _evaluate_single_multi_turn_entry  # noqa: E402
from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils  # noqa: E402
from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils import (  # noqa: E402
    execute_multi_turn_func_call,
    is_empty_execute_response,
)
from bfcl_eval.model_handler.utils import default_decode_execute_prompting  # noqa: E402

# Names the instances; BFCL's evaluator appends "_eval" and "_ground_truth_eval" to it.
MODEL_NAME = "skilleval"


class PromptingHandler:
    """What BFCL's evaluator asks of a prompting handler: its decoder."""

    def decode_execute(self, result, has_tool_call_tag):
        return default_decode_execute_prompting(result, has_tool_call_tag)


class Instances:
    """BFCL keeps API instances in its module's globals by model and entry id; a second
    check of one id in this process would find the first one's state, so every check and
    every run of an entry removes the instances it added."""

    def snapshot(self):
        return set(vars(multi_turn_utils))

    def drop_since(self, before):
        space = vars(multi_turn_utils)
        for name in set(space) - before:
            del space[name]


INSTANCES = Instances()
ENTRIES = {}


def long_context(entry_id):
    category = entry_id.rsplit("_", 1)[0]
    return "long_context" in category or "composite" in category


def execute(entry, calls):
    results, _ = execute_multi_turn_func_call(
        calls,
        entry.get("initial_config", {}),
        entry["involved_classes"],
        MODEL_NAME,
        entry["id"],
        long_context=long_context(entry["id"]),
        is_evaL_run=False,
    )
    return results


def handle(request):
    op = request.get("op")
    if op == "hello":
        return {"bfcl_eval": version("bfcl-eval"), "max_steps": MAXIMUM_STEP_LIMIT}
    if op == "start":
        entry = request["entry"]
        if entry["id"] in ENTRIES:
            raise ValueError(f"entry {entry['id']} is already running in this helper")
        before = INSTANCES.snapshot()
        execute(entry, [])
        ENTRIES[entry["id"]] = (entry, before)
        return {"ok": True}
    if op == "decode":
        try:
            calls = default_decode_execute_prompting(request["text"], has_tool_call_tag=False)
        except Exception as error:  # BFCL's loop ends the turn on any decoding failure
            return {"undecodable": f"{type(error).__name__}: {error}"}
        return {"calls": calls, "empty": bool(is_empty_execute_response(calls))}
    if op == "execute":
        entry, _ = ENTRIES[request["id"]]
        return {"results": execute(entry, request["calls"])}
    if op == "end":
        _, before = ENTRIES.pop(request["id"])
        INSTANCES.drop_since(before)
        return {"ok": True}
    if op == "holdout_message":
        return {
            "text": DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_PROMPTING.format(
                functions=request["functions"]
            )
        }
    if op == "check":
        entry = dict(request["entry"])
        before = INSTANCES.snapshot()
        try:
            verdict = _evaluate_single_multi_turn_entry(
                PromptingHandler(),
                entry["id"],
                request["result"],
                request["ground_truth"],
                entry,
                MODEL_NAME,
                entry["id"].rsplit("_", 1)[0],
            )
        finally:
            INSTANCES.drop_since(before)
        if verdict["valid"]:
            return {"valid": True, "error_type": None, "error_message": None}
        error = verdict["error"]
        message = error.get("error_message")
        if isinstance(message, list):
            message = " ".join(str(m) for m in message)
        return {
            "valid": False,
            "error_type": error.get("error_type"),
            "error_message": None if message is None else str(message),
        }
    raise ValueError(f"unknown op {op!r}")


def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            if request.get("op") == "quit":
                break
            reply = handle(request)
        except Exception as error:
            reply = {"error": f"{type(error).__name__}: {error}", "trace": traceback.format_exc()}
        _protocol.write(json.dumps(reply) + "\n")
        _protocol.flush()


if __name__ == "__main__":
    main()
