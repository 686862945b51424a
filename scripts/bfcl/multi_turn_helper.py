"""BFCL's own multi-turn machinery behind a JSON-lines pipe, for `skilleval bench`.

skilleval starts this with `python3 -s multi_turn_helper.py` (the `bfcl-eval` package on
PYTHONPATH, as `scripts/setup.sh --bfcl` installs it) and talks to it one JSON object a line:
each request on stdin gets exactly one reply on stdout, `{"error": "..."}` when it failed.

  {"op": "hello"}                             -> {"bfcl_eval": version, "max_steps": N}
  {"op": "start", "entry": {...}, "result_dir": "..."}
                                              -> {"question": [...]}  the entry's API instances, fresh
  {"op": "decode", "text": "..."}             -> {"calls": [...], "empty": bool} | {"undecodable": msg}
  {"op": "execute", "id": ..., "calls": [...]}-> {"results": [...]}
  {"op": "end", "id": ..., "flush": bool}     -> {"ok": true}   the instances dropped
  {"op": "holdout_message", "functions": [...]} -> {"text": "..."}
  {"op": "check", "entry": {...}, "ground_truth": [...], "result": ...}
                                              -> {"valid": bool, "error_type": ..., "error_message": ...}
  {"op": "quit"}

`entry` is the question line (`id`, `initial_config`, `involved_classes`, a memory entry's
`scenario`). `start` answers with the turns as BFCL sends them: a memory entry's first turn gains
BFCL's answer-format and memory prompts, and its memory is loaded from the snapshots BFCL keeps
under `result_dir` (the model's result folder). `end` with `flush` saves a memory prerequisite's
memory there, as BFCL does after each prerequisite conversation. Every function here is BFCL's:
the decoder its prompting handlers use, its executor, its evaluator's per-entry checks.
"""

import copy
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
from bfcl_eval.eval_checker.eval_runner import (  # noqa: E402
    _evaluate_single_agentic_entry,
    _evaluate_single_multi_turn_entry,
)
from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils  # noqa: E402
from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils import (  # noqa: E402
    execute_multi_turn_func_call,
    is_empty_execute_response,
)
from bfcl_eval.model_handler.utils import (  # noqa: E402
    add_memory_instruction_system_prompt,
    default_decode_execute_prompting,
)
from bfcl_eval.utils import (  # noqa: E402
    is_agentic,
    is_memory,
    is_memory_prereq,
    populate_initial_settings_for_memory_test_cases,
    process_agentic_test_case,
)

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
    """The results of `calls` on the entry's instances, and the instances by class."""
    return execute_multi_turn_func_call(
        calls,
        entry.get("initial_config", {}),
        entry["involved_classes"],
        MODEL_NAME,
        entry["id"],
        long_context=long_context(entry["id"]),
        is_evaL_run=False,
    )


def category_of(entry_id):
    return entry_id.rsplit("_", 1)[0]


def start(entry, result_dir):
    """The entry's instances, made as BFCL's inference makes them, and its turns as sent."""
    entry = copy.deepcopy(entry)
    if is_memory(entry["id"]):
        if not result_dir:
            raise ValueError(f"memory entry {entry['id']} needs a result_dir for its snapshots")
        # As BFCL's loading does: the answer-format prompt, then the memory backend's config.
        process_agentic_test_case([entry])
        populate_initial_settings_for_memory_test_cases([entry], Path(result_dir))
    _, instances = execute(entry, [])
    if is_memory(entry["id"]):
        (instance,) = instances.values()
        entry["question"] = add_memory_instruction_system_prompt(
            entry["question"], category_of(entry["id"]), entry["scenario"], instance
        )
    return entry


def handle(request):
    op = request.get("op")
    if op == "hello":
        return {"bfcl_eval": version("bfcl-eval"), "max_steps": MAXIMUM_STEP_LIMIT}
    if op == "start":
        entry_id = request["entry"]["id"]
        if entry_id in ENTRIES:
            raise ValueError(f"entry {entry_id} is already running in this helper")
        before = INSTANCES.snapshot()
        entry = start(request["entry"], request.get("result_dir"))
        ENTRIES[entry_id] = (entry, before)
        return {"question": entry["question"]}
    if op == "decode":
        try:
            calls = default_decode_execute_prompting(request["text"], has_tool_call_tag=False)
        except Exception as error:  # BFCL's loop ends the turn on any decoding failure
            return {"undecodable": f"{type(error).__name__}: {error}"}
        return {"calls": calls, "empty": bool(is_empty_execute_response(calls))}
    if op == "execute":
        entry, _ = ENTRIES[request["id"]]
        results, _ = execute(entry, request["calls"])
        return {"results": results}
    if op == "end":
        entry, before = ENTRIES.pop(request["id"])
        try:
            # BFCL saves a prerequisite's memory when its conversation ends without error.
            if request.get("flush") and is_memory_prereq(entry["id"]):
                _, instances = execute(entry, [])
                (instance,) = instances.values()
                instance._flush_memory_to_local_file()
        finally:
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
        # BFCL's evaluator picks the check by category: memory is agentic (the final answer).
        evaluate = (
            _evaluate_single_agentic_entry
            if is_agentic(entry["id"])
            else _evaluate_single_multi_turn_entry
        )
        try:
            verdict = evaluate(
                PromptingHandler(),
                entry["id"],
                request["result"],
                request["ground_truth"],
                entry,
                MODEL_NAME,
                category_of(entry["id"]),
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
