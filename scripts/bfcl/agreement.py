"""Verdicts of BFCL's official checker on many model replies, as fixtures for ours.

Run inside a venv holding bfcl-eval:  python scripts/bfcl/agreement.py
Writes, under tests/data/bfcl/:
  agreement.jsonl     {"id", "category", "label", "output", "valid", "error_type"} per reply:
                      right answers, near misses and malformed text for sampled entries;
  ground_truth_exceptions.json
                      entries whose first accepted answer, written as a call, fails even
                      BFCL's checker, with its error type and message.
"""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bfcl_shim  # noqa: F401  (must come before bfcl_eval)

from bfcl_eval.constants.enums import Language, ReturnFormat
from bfcl_eval.eval_checker.eval_runner import (
    _evaluate_single_ast_entry,
    _evaluate_single_relevance_entry,
)
from bfcl_eval.model_handler.utils import default_decode_ast_prompting
from bfcl_eval.utils import load_dataset_entry, load_ground_truth_entry

CATEGORIES = [
    "simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance",
    "live_simple", "live_multiple", "live_parallel", "live_parallel_multiple",
    "live_irrelevance", "live_relevance",
]
# A prompting model whose names keep their dots, as a local model's do.
MODEL = "Qwen_Qwen3-8B"
ENTRIES_PER_CATEGORY = 10
DICT_ENTRIES_PER_CATEGORY = 3
DATA = Path(__file__).resolve().parents[2] / "tests" / "data" / "bfcl"


class PromptingHandler:
    def decode_ast(self, result, language, has_tool_call_tag):
        return default_decode_ast_prompting(result, language, has_tool_call_tag)


HANDLER = PromptingHandler()


def verdict(category, entry, answer, output):
    if "relevance" in category:
        result = _evaluate_single_relevance_entry(HANDLER, entry["id"], output, entry, MODEL, category)
    else:
        result = _evaluate_single_ast_entry(
            HANDLER, entry["id"], output, answer, entry, MODEL, category,
            language=Language.PYTHON, return_format=ReturnFormat.PYTHON,
        )
    return result["valid"], result.get("error_type"), result.get("error")


def has_dict_param(entry):
    """Dict and list-of-dict parameters have checks of their own, so sample them on purpose."""
    for function in entry["function"]:
        for details in function["parameters"].get("properties", {}).values():
            if details.get("type") == "dict" or details.get("items", {}).get("type") == "dict":
                return True
    return False


def first_accepted(options):
    for option in options:
        if option != "":
            return option, True
    return None, False


def chosen_value(param_schema, options):
    """The first accepted value, with accepted-value lists inside dicts unwrapped too."""
    value, found = first_accepted(options)
    if not found:
        return None, False
    ptype = param_schema.get("type") if param_schema else None
    items_type = (param_schema or {}).get("items", {}).get("type")
    if ptype == "dict" and isinstance(value, dict):
        value = unwrap_dict(value)
    elif ptype == "array" and items_type == "dict" and isinstance(value, list):
        value = [unwrap_dict(d) if isinstance(d, dict) else d for d in value]
    return value, True


def unwrap_dict(accepted_by_key):
    out = {}
    for key, options in accepted_by_key.items():
        if isinstance(options, list):
            value, found = first_accepted(options)
            if found:
                out[key] = value
        else:
            out[key] = options
    return out


def schema_of(functions, name):
    for function in functions:
        if function["name"] == name:
            return function
    return None


def answer_calls(entry, answers):
    calls = []
    for answer in answers:
        name, accepted = next(iter(answer.items()))
        function = schema_of(entry["function"], name) or {"parameters": {"properties": {}}}
        props = function["parameters"].get("properties", {})
        args = []
        for param, options in accepted.items():
            value, found = chosen_value(props.get(param), options)
            if found:
                args.append((param, value))
        calls.append((name, args))
    return calls


def render(calls):
    return "[" + ", ".join(
        f"{name}(" + ", ".join(f"{k}={v!r}" for k, v in args) + ")" for name, args in calls
    ) + "]"


def with_arg(calls, param, value):
    name, args = calls[0]
    new_args = [(k, value if k == param else v) for k, v in args]
    return [(name, new_args)] + calls[1:]


def value_mutations(value, schema):
    """Near misses for one argument, each a (label, new value)."""
    ptype = (schema or {}).get("type")
    out = []
    if isinstance(value, bool):
        out += [("bool_as_int", int(value)), ("bool_flipped", not value), ("bool_as_str", str(value).lower())]
    elif isinstance(value, int):
        out += [("int_off_by_one", value + 1), ("int_as_str", str(value)), ("int_as_float", float(value)),
                ("int_as_bool", True), ("int_negated", -value - 1)]
    elif isinstance(value, float):
        out += [("float_as_int", int(value)), ("float_changed", value + 0.5), ("float_as_str", str(value))]
    elif isinstance(value, str):
        out += [("str_case_and_punct", value.upper().replace(" ", " - ") + "."), ("str_changed", value + "zz"),
                ("str_as_int", 7), ("str_single_quote", value + "'"), ("str_as_list", [value])]
    elif isinstance(value, list):
        out += [("list_as_tuple", tuple(value)), ("list_reversed", list(reversed(value))),
                ("list_extra_item", value + [value[0]] if value else ["zz"]), ("list_empty", []),
                ("list_items_as_int", [7 for _ in value] or [7]), ("list_as_str", str(value))]
        if value and isinstance(value[0], dict):
            first_key = next(iter(value[0]), "k")
            out += [("list_dicts_changed", [{**value[0], first_key: "zz"}] + value[1:]),
                    ("list_dicts_extra_key", [{**value[0], "zz_key": 1}] + value[1:])]
        if value and isinstance(value[0], str):
            out.append(("list_items_case", [v.upper() if isinstance(v, str) else v for v in value]))
        if value and isinstance(value[0], (int, float)) and not isinstance(value[0], bool):
            out.append(("list_items_as_float", [float(v) if isinstance(v, int) else v for v in value]))
    elif isinstance(value, dict):
        out += [("dict_empty", {}), ("dict_extra_key", {**value, "zz_key": 1}), ("dict_as_list", [value])]
        if value:
            key = next(iter(value))
            smaller = dict(value)
            del smaller[key]
            out += [("dict_missing_key", smaller), ("dict_changed_value", {**value, key: "zz"})]
            if isinstance(value[key], str):
                out.append(("dict_value_case", {**value, key: value[key].upper()}))
    if ptype == "tuple" and isinstance(value, list):
        out.append(("tuple_given_as_tuple", tuple(value)))
    out.append(("as_variable_name", "VARIABLE_NAME"))
    return out


def cases_for(category, entry, answers):
    if "relevance" in category:
        first = entry["function"][0]["name"] if entry["function"] else "f"
        return [
            ("prose", "I cannot answer that with the functions I have."),
            ("empty_list", "[]"),
            ("bare_call", f"[{first}()]"),
            ("call_with_arg", f"{first}(x=1)"),
            ("malformed", f"[{first}(x=]"),
            ("fenced_call", f"```\n[{first}(q='a')]\n```"),
            ("fenced_python_call", f"```python\n[{first}(q='a')]\n```"),
            ("list_of_non_calls", "[1, 2]"),
        ]
    calls = answer_calls(entry, answers)
    right = render(calls)
    cases = [
        ("ground_truth", right),
        ("no_brackets", right[1:-1]),
        ("fenced", f"```\n{right}\n```"),
        ("fenced_python", f"```python\n{right}\n```"),
        ("leading_prose", f"Sure, here it is: {right}"),
        ("prose", "I need more details to answer."),
        ("empty_list", "[]"),
        ("truncated", right[:-3]),
        ("missing_close_bracket", right[:-1]),
        ("wrong_name", render([(calls[0][0] + "_x", calls[0][1])] + calls[1:])),
        ("extra_param", render([(calls[0][0], calls[0][1] + [("zz_unexpected", 1)])] + calls[1:])),
        ("doubled_calls", render(calls + calls)),
        ("positional_args", render([(calls[0][0], [])] + calls[1:]).replace("()", "(1)", 1)),
        ("quoted", "'" + right + "'"),
    ]
    if len(calls) > 1:
        cases += [("reversed_calls", render(list(reversed(calls)))), ("dropped_call", render(calls[:-1]))]
    name, args = calls[0]
    function = schema_of(entry["function"], name)
    props = function["parameters"]["properties"] if function else {}
    required = function["parameters"].get("required", []) if function else []
    accepted = next(iter(answers[0].values()))
    for param, value in args:
        if param in required:
            cases.append((f"missing_required:{param}", render([(name, [a for a in args if a[0] != param])] + calls[1:])))
        elif "" in accepted.get(param, []):
            cases.append((f"omitted_optional:{param}", render([(name, [a for a in args if a[0] != param])] + calls[1:])))
        else:
            cases.append((f"omitted_unmarked:{param}", render([(name, [a for a in args if a[0] != param])] + calls[1:])))
        for label, new_value in value_mutations(value, props.get(param)):
            cases.append((f"{label}:{param}", render(with_arg(calls, param, new_value))))
    other = [f["name"] for f in entry["function"] if f["name"] != name]
    if other:
        cases.append(("other_function", render([(other[0], args)] + calls[1:])))
    return cases


def main():
    lines = []
    exceptions = []
    crashes = 0
    for category in CATEGORIES:
        entries = load_dataset_entry(category, include_prereq=False, include_language_specific_hint=False)
        answers = {} if "relevance" in category else {a["id"]: a["ground_truth"] for a in load_ground_truth_entry(category)}
        if answers:
            for entry in entries:
                output = render(answer_calls(entry, answers[entry["id"]]))
                try:
                    valid, error_type, error = verdict(category, entry, answers[entry["id"]], output)
                except Exception as e:  # noqa: BLE001 - BFCL itself cannot check this one
                    valid, error_type, error = False, f"exception:{type(e).__name__}", [str(e)]
                if not valid:
                    exceptions.append({"id": entry["id"], "output": output, "error_type": error_type,
                                       "reason": " ".join(map(str, error or []))[:400]})
        step = max(1, len(entries) // ENTRIES_PER_CATEGORY)
        sampled = entries[::step][:ENTRIES_PER_CATEGORY]
        sampled += [e for e in entries if has_dict_param(e) and e not in sampled][:DICT_ENTRIES_PER_CATEGORY]
        for entry in sampled:
            for label, output in cases_for(category, entry, answers.get(entry["id"])):
                try:
                    valid, error_type, _ = verdict(category, entry, answers.get(entry["id"]), output)
                except Exception:  # noqa: BLE001 - BFCL would crash; not a verdict to compare
                    crashes += 1
                    continue
                lines.append({"id": entry["id"], "category": category, "label": label,
                              "output": output, "valid": valid, "error_type": error_type})
    with (DATA / "agreement.jsonl").open("w", encoding="utf-8") as out:
        for line in lines:
            out.write(json.dumps(line, ensure_ascii=False) + "\n")
    with (DATA / "ground_truth_exceptions.json").open("w", encoding="utf-8") as out:
        json.dump(exceptions, out, indent=1, ensure_ascii=False)
        out.write("\n")
    kinds = sorted({l["error_type"] for l in lines if l["error_type"]})
    print(f"{len(lines)} cases ({crashes} skipped: BFCL raised), {len(exceptions)} ground-truth exceptions")
    print("error types:", ", ".join(kinds))


if __name__ == "__main__":
    main()
