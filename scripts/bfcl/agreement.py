"""Verdicts of BFCL's official checker on many model replies, as fixtures for ours.

Run inside a venv holding bfcl-eval:  python scripts/bfcl/agreement.py
Writes, under tests/data/bfcl/:
  agreement.jsonl     {"id", "category", "label", "output", "valid", "error_type"} per reply:
                      right answers, near misses and malformed text for sampled entries;
                      for simple_java and simple_javascript, replies in their syntax (every
                      entry's answer, and near misses for sampled entries), appended last;
  ground_truth_exceptions.json
                      entries whose first accepted answer, written as a call, fails even
                      BFCL's checker, with its error type and message.
"""

import json
import re
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
# Decoded by tree-sitter and typed by BFCL's converters; their cases follow the others'.
JAVA_JS_CATEGORIES = {"simple_java": Language.JAVA, "simple_javascript": Language.JAVASCRIPT}
JAVA_JS_SAMPLED = 30
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
    if category in JAVA_JS_CATEGORIES:
        language = JAVA_JS_CATEGORIES[category]
        return_format = ReturnFormat.JAVA if language == Language.JAVA else ReturnFormat.JAVASCRIPT
        result = _evaluate_single_ast_entry(
            HANDLER, entry["id"], output, answer, entry, MODEL, category,
            language=language, return_format=return_format,
        )
        return result["valid"], result.get("error_type"), result.get("error")
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


IDENTIFIER = re.compile(r"^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*$")


def java_js_scalar(value):
    """A value written without its schema: strings quoted, the rest as Java/JS spells them."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(java_js_scalar(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)}: {java_js_scalar(v)}" for k, v in value.items()) + "}"
    return repr(value)


JAVA_BOXED = {"integer": "int", "long": "long", "String": "String", "char": "char", "boolean": "boolean",
              "double": "double", "float": "float", "any": "Object"}


def java_value(value, ptype, items=None):
    """An answer value as Java source for its declared type."""
    if ptype in ("integer", "byte", "short") and isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if ptype == "long" and isinstance(value, int):
        return f"{value}L"
    if ptype == "float" and isinstance(value, (int, float)):
        return f"{value}f"
    if ptype == "double" and isinstance(value, (int, float)):
        return repr(float(value))
    if ptype == "boolean" and isinstance(value, bool):
        return "true" if value else "false"
    if ptype == "char" and isinstance(value, str):
        return "'" + value + "'"
    if ptype == "Array" and isinstance(value, list):
        return f"new {JAVA_BOXED.get(items, 'Object')}[]{{" + ", ".join(java_value(v, items) for v in value) + "}"
    if ptype == "ArrayList" and isinstance(value, list):
        return "new ArrayList<>(Arrays.asList(" + ", ".join(java_value(v, items) for v in value) + "))"
    if ptype == "HashMap" and isinstance(value, dict):
        puts = " ".join(f"put({json.dumps(k)}, {java_js_scalar(v)});" for k, v in value.items())
        return "new HashMap<String, Object>() {{ " + puts + " }}"
    if ptype == "any" and isinstance(value, str) and IDENTIFIER.match(value):
        return value
    if isinstance(value, str):
        return json.dumps(value)
    return java_js_scalar(value)


def js_value(value, ptype, items=None):
    """An answer value as JavaScript source for its declared type."""
    if ptype == "Bigint" and isinstance(value, int):
        return f"{value}n"
    if ptype == "array" and isinstance(value, list):
        return "[" + ", ".join(js_value(v, items) for v in value) + "]"
    if ptype == "any" and isinstance(value, str) and IDENTIFIER.match(value):
        return value
    return java_js_scalar(value)


def source_call(name, args):
    return f"{name}(" + ", ".join(f"{k}={v}" for k, v in args) + ")"


# Source texts tried for every argument, whatever its type: odd numbers, nesting, commas
# inside strings, lambdas, special values; each converter must read them as BFCL's does.
ODD_LITERALS = [
    "1e5", "-0.5", ".5", "1_000", "0x1F", "007", "- 5", "+5", "1.5f", "2L", "3n", "1.5e-3F",
    "'a'", '""', "[]", "{}", "[1, [2, 3]]", '{"a": {"b": 1}}', '["a, b", "c"]', '"a,b:c"',
    "{'k': [1, 2], \"j\": {\"x\": \"y\"}}", "{k: 1, j: 'v, w: z', m: [1, 2]}", '{ "a" : 1 , "b":2 }',
    "new Foo(1, \"x\")", "x -> x + 1", "(a, b) => a + b", "Infinity", "NaN", "undefined", "this",
    "`t${x}`", "new String[][]{{\"a\"}}", "new int[]{1, -2, 3}", "new int[] { }", "new HashMap<String, Integer>()",
    "List.of(1, 2)", "new ArrayList<Integer>(Arrays.asList(1, 2))", "new ArrayList<>(Arrays.asList())",
    "new Array(1, 2)", "new Array([1, 2], [3])", "[[1, 2], [3, 4]]", "[ [ 'a' ], [ 'b' ] ]", "[1, 2,]",
    "[\"x\", 'y', z]", "true", "false", "TRUE", "null", "\"héllo wörld\"", "'ü'", "\"\\u00e9\"",
    "a.b.c", "Foo.class", "int.class", "new Object()", "!true", "1 + 2", "\"a\" + \"b\"",
]


def source_mutations(language, value, ptype, items, odd):
    """Near misses for one argument, as source text; with `odd`, the odd literals too."""
    write = java_value if language == Language.JAVA else js_value
    right = write(value, ptype, items)
    out = [(f"odd_literal_{i}", text) for i, text in enumerate(ODD_LITERALS)] if odd else []
    out += [("as_identifier", "someVariable"), ("as_string", json.dumps(str(value))),
           ("non_ascii_string", json.dumps(f"{value}é✓")), ("null", "null"),
           ("method_call", "obj.get(1, \"x\")"), ("parenthesized", f"({right})")]
    if isinstance(value, bool):
        out += [("bool_flipped", "false" if value else "true"), ("bool_capital", "True"), ("bool_as_int", "1")]
    elif isinstance(value, int):
        out += [("int_off_by_one", str(value + 1)), ("int_as_float", f"{value}.0"), ("int_long", f"{value}L"),
                ("int_negative", f"-{value}"), ("int_hex", hex(value)), ("int_underscore", f"1_{value}"),
                ("int_float_suffix", f"{value}f"), ("int_bigint", f"{value}n"), ("int_exponent", f"{value}e0")]
    elif isinstance(value, float):
        out += [("float_changed", repr(value + 0.5)), ("float_as_int", str(int(value))),
                ("float_suffix", f"{value}f"), ("float_exponent", f"{value}e1"), ("float_double_suffix", f"{value}d")]
    elif isinstance(value, str):
        out += [("str_changed", json.dumps(value + "zz")), ("str_case_punct", json.dumps(value.upper() + ".")),
                ("str_single_quoted", "'" + value + "'"), ("str_concat", json.dumps(value[:1]) + " + " + json.dumps(value[1:])),
                ("str_template", "`" + value + "`"), ("str_bare", value), ("str_escaped", json.dumps(value + "\n\"q\""))]
    elif isinstance(value, list):
        rev = list(reversed(value))
        out += [("list_reversed", write(rev, ptype, items)), ("list_empty", write([], ptype, items)),
                ("list_extra", write(value + value[:1] if value else ["zz"], ptype, items)),
                ("list_items_as_str", write([str(v) for v in value], ptype, "String")),
                ("list_nested", write([value, value], ptype, "array")),
                ("list_spaced", right.replace(", ", " ,  ")),
                ("list_single_quoted", right.replace('"', "'"))]
        if language == Language.JAVA:
            inner = ", ".join(java_value(v, items) for v in value)
            out += [("java_array_sized", "new int[3]"), ("java_list_of", f"List.of({inner})"),
                    ("java_as_list", f"Arrays.asList({inner})"), ("java_initializer_only", "{" + inner + "}"),
                    ("java_arraylist_empty", "new ArrayList<>()"),
                    ("java_arraylist_adds", "new ArrayList<String>() {{ " + " ".join(f"add({java_value(v, items)});" for v in value) + " }}"),
                    ("java_array_as_arraylist", "new ArrayList<>(Arrays.asList(" + inner + "))"),
                    ("java_arraylist_as_array", f"new Object[]{{{inner}}}"),
                    ("java_2d_array", f"new int[][]{{{{1, 2}}, {{3}}}}")]
        else:
            inner = ", ".join(js_value(v, items) for v in value)
            out += [("js_new_array", f"new Array({inner})"), ("js_2d", f"[[{inner}], [1, 2]]"),
                    ("js_2d_new_array", f"new Array([{inner}], [3])"), ("js_trailing_comma", f"[{inner},]"),
                    ("js_spread", f"[...{inner or 'x'}]")]
    elif isinstance(value, dict):
        key = next(iter(value), "k")
        smaller = {k: v for k, v in value.items() if k != key}
        out += [("dict_empty", write({}, ptype, items)), ("dict_extra_key", write({**value, "zz_key": 1}, ptype, items)),
                ("dict_missing_key", write(smaller, ptype, items)),
                ("dict_changed_value", write({**value, key: "zz"}, ptype, items)),
                ("dict_nested", write({**value, "inner": {"a": [1, 2]}}, ptype, items))]
        if language == Language.JAVA:
            out += [("java_map_of", "new HashMap<>(Map.of(" + ", ".join(f"{json.dumps(k)}, {java_js_scalar(v)}" for k, v in value.items()) + "))"),
                    ("java_hashmap_empty", "new HashMap<>()"), ("java_hashmap_body_empty", "new HashMap<String, String>() {{ }}")]
        else:
            out += [("js_unquoted_keys", "{" + ", ".join(f"{k}: {java_js_scalar(v)}" for k, v in value.items()) + "}"),
                    ("js_single_quotes", "{" + ", ".join(f"'{k}': '{v}'" for k, v in value.items()) + "}"),
                    ("js_comma_in_value", "{" + ", ".join(f"{json.dumps(k)}: \"a, b: c\"" for k in value) + "}"),
                    ("js_array_value", "{" + ", ".join(f"{json.dumps(k)}: [1, 2]" for k in value) + "}")]
    return out


def java_js_answer_args(entry, answer):
    name, accepted = next(iter(answer.items()))
    function = schema_of(entry["function"], name)
    props = function["parameters"]["properties"] if function else {}
    args = []
    for param, options in accepted.items():
        schema = props.get(param, {})
        ptype, items = schema.get("type"), schema.get("items", {}).get("type")
        value, found = first_accepted(options)
        if not found:
            continue
        if ptype in ("dict", "HashMap") and isinstance(value, dict):
            value = unwrap_dict(value)
        args.append((param, value, ptype, items))
    return name, args


def java_js_cases(category, entry, answers, mutate):
    language = JAVA_JS_CATEGORIES[category]
    write = java_value if language == Language.JAVA else js_value
    name, args = java_js_answer_args(entry, answers[0])
    written = [(p, write(v, t, i)) for p, v, t, i in args]
    right = "[" + source_call(name, written) + "]"
    cases = [("ground_truth", right)]
    if not mutate:
        return cases
    function = schema_of(entry["function"], name)
    required = function["parameters"].get("required", []) if function else []
    accepted = next(iter(answers[0].values()))
    cases += [
        ("no_brackets", right[1:-1]), ("fenced", f"```\n{right}\n```"),
        ("fenced_lang", f"```{'java' if language == Language.JAVA else 'javascript'}\n{right}\n```"),
        ("leading_prose", f"Sure: {right}"), ("prose", "I need more details to answer."),
        ("empty_list", "[]"), ("truncated", right[:-3]), ("missing_close_bracket", right[:-1]),
        ("semicolon", "[" + source_call(name, written) + ";]"),
        ("wrong_name", "[" + source_call(name + "_x", written) + "]"),
        ("short_name", "[" + source_call(name.split(".")[-1], written) + "]"),
        ("extra_param", "[" + source_call(name, written + [("zz_unexpected", "1")]) + "]"),
        ("positional_identifier", "[" + source_call(name, written).replace("(", "(someVariable, ", 1) + "]"),
        ("positional_true", "[" + source_call(name, written).replace("(", "(true, ", 1) + "]"),
        ("positional_literal", "[" + source_call(name, written).replace("(", "(42, ", 1) + "]"),
        ("doubled_calls", "[" + source_call(name, written) + ", " + source_call(name, written) + "]"),
        ("two_statements", "[" + source_call(name, written) + "; " + source_call(name, written) + "]"),
        ("duplicate_param", "[" + source_call(name, written + written[:1]) + "]"),
        ("compound_assignment", "[" + source_call(name, written).replace("=", "+=", 1) + "]"),
        ("python_list", render([(name, [(p, v) for p, v, _, _ in args])])),
        ("quoted", "'" + right + "'"),
        ("non_ascii_prefix", "[" + source_call(name, [("zz_note", json.dumps("héllo wörld ✓"))] + written) + "]"),
        ("await", "[await " + source_call(name, written) + "]"),
        ("nested_call", "[log(" + source_call(name, written) + ")]"),
        ("comment", "[" + source_call(name, written) + " // done]"),
        # Java cuts node text by byte offsets from a character string: non-ASCII text before
        # the arguments shifts every value after it.
        ("non_ascii_comment", "[" + source_call(name, written).replace("(", "(/* héllo wörld ✓ */ ", 1) + "]"),
        ("multiline", "[" + source_call(name, written).replace("(", "(\n    ", 1).replace(", ", ",\n    ") + "\n]"),
        ("no_args", "[" + name + "()]"),
        ("chained_call", "[" + source_call(name, written) + ".then(done)]"),
        ("optional_call", "[" + source_call(name, written).replace("(", "?.(", 1) + "]"),
        ("tagged_template", "[" + name + "`x ${y}`]"),
        ("new_expression", "[new " + source_call(name, written) + "]"),
        ("generic_call", "[" + source_call(name, written).replace(name.split(".")[-1] + "(", "<String>" + name.split(".")[-1] + "(", 1) + "]"),
        ("inside_class", "[class A { void f() { " + source_call(name, written) + "; } }]"),
        ("assigned_result", "[var result = " + source_call(name, written) + "]"),
    ]
    # The odd literals go to one argument per entry, a different one from entry to entry.
    odd_index = int(entry["id"].rsplit("_", 1)[1]) % max(1, len(args))
    for index, (param, value, ptype, items) in enumerate(args):
        rest = [w for w in written if w[0] != param]
        if param in required:
            cases.append((f"missing_required:{param}", "[" + source_call(name, rest) + "]"))
        elif "" in accepted.get(param, []):
            cases.append((f"omitted_optional:{param}", "[" + source_call(name, rest) + "]"))
        else:
            cases.append((f"omitted_unmarked:{param}", "[" + source_call(name, rest) + "]"))
        for label, text in source_mutations(language, value, ptype, items, index == odd_index):
            changed = [(p, text if p == param else v) for p, v in written]
            cases.append((f"{label}:{param}", "[" + source_call(name, changed) + "]"))
    return cases


def java_js_lines():
    lines = []
    crashes = 0
    for category in JAVA_JS_CATEGORIES:
        entries = load_dataset_entry(category, include_prereq=False, include_language_specific_hint=False)
        answers = {a["id"]: a["ground_truth"] for a in load_ground_truth_entry(category)}
        step = max(1, len(entries) // JAVA_JS_SAMPLED)
        sampled = {e["id"] for e in entries[::step][:JAVA_JS_SAMPLED]}
        for entry in entries:
            for label, output in java_js_cases(category, entry, answers[entry["id"]], entry["id"] in sampled):
                try:
                    valid, error_type, _ = verdict(category, entry, answers[entry["id"]], output)
                except Exception:  # noqa: BLE001 - BFCL would crash; not a verdict to compare
                    crashes += 1
                    continue
                lines.append({"id": entry["id"], "category": category, "label": label,
                              "output": output, "valid": valid, "error_type": error_type})
    return lines, crashes


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
    java_js, java_js_crashes = java_js_lines()
    lines += java_js
    crashes += java_js_crashes
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
