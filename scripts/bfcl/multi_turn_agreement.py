"""Verdicts of BFCL's official evaluator on many multi-turn results, as fixtures for ours.

Run with bfcl-eval importable:  PYTHONPATH=/path/to/bfcl-eval python3 -s scripts/bfcl/multi_turn_agreement.py
Writes tests/data/bfcl/multi_turn_agreement.jsonl, one case a line, sorted by category, entry and
mutation:
  {"id", "category", "label", "result", "valid", "error_type"}
`result` is what a model run stores for the entry in BFCL's result file: one list of raw step
replies per user turn (or a bare string, for `not_a_list`). `label` names the mutation of the
entry's ground truth that made it; `valid` and `error_type` are what BFCL gave it.

How the verdicts are made: BFCL's executor keeps every entry's API instances in module globals,
keyed by model name and entry id, so an id checked twice in one process starts from the state
the first check left. Hence mutation round k (the k-th mutation of every sampled entry, each id
once per category file) is written as ordinary result files into a fresh BFCL project root and
evaluated in a fresh Python process, through `eval_runner.evaluate_task` for a prompting model
(Qwen/Qwen3-8B, whose handler decodes with default_decode_execute_prompting) exactly as
`bfcl evaluate --partial-eval` would reach it; the verdicts are read back from the score files
BFCL writes (an entry absent from them passed). Only the leaderboard CSV step after it is left
out, since it needs pandas; `overrides` and `tqdm`, when missing, get pass-through stand-ins
rather than bfcl_shim's inert ones, which would replace the handler's decode_execute.

Prints cases per category, valid count, error types, verdicts per mutation, the wall time, and
a sanity check: every `ground_truth` case should pass, except entries whose ground truth has
positional arguments (BFCL's prompting decoder drops them); any failing one is listed.
"""

import ast
import concurrent.futures
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
import types
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "corpora" / "bfcl"
OUTPUT = ROOT / "tests" / "data" / "bfcl" / "multi_turn_agreement.jsonl"

CATEGORIES = ["multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context"]
# Registry name of a prompting model; BFCL's result and score folders spell it with "_".
MODEL = "Qwen/Qwen3-8B"
MODEL_FOLDER = MODEL.replace("/", "_")
ENTRIES_PER_CATEGORY = 25
# The four categories share their 200 scenarios, entry for entry: a different offset per
# category samples different scenarios, and the stride spreads them over all API classes.
STRIDE = 8
OFFSETS = {"multi_turn_base": 0, "multi_turn_miss_func": 2, "multi_turn_miss_param": 4,
           "multi_turn_long_context": 6}
NOT_A_LIST_EVERY = 8  # of the sampled entries, every 8th gets a `not_a_list` case
# Rounds are independent, so they run side by side; the output does not depend on their order.
WORKERS = max(1, min(4, os.cpu_count() or 1))

PROSE = "I cannot do that with the functions I have."
FINAL = "All done."
MUTATIONS = [
    "ground_truth", "one_call_per_step", "fenced", "turn_missing", "empty_turn", "call_dropped",
    "argument_changed", "extra_call", "calls_in_empty_turn", "not_a_list", "undecodable_step",
    "order_swapped", "step_duplicated",
]

# Per class, a call that only reads and one that changes (or tries to change) the state.
READING_CALL = {
    "GorillaFileSystem": "ls()",
    "MathAPI": "mean(numbers=[1.0, 2.0, 3.0])",
    "MessageAPI": "list_users()",
    "TwitterAPI": "list_all_following()",
    "TicketAPI": "get_user_tickets()",
    "TradingBot": "get_watchlist()",
    "TravelAPI": "list_all_airports()",
    "VehicleControlAPI": "check_tire_pressure()",
}
WRITING_CALL = {
    "GorillaFileSystem": "touch(file_name='notes_extra.txt')",
    "MathAPI": "add(a=1.0, b=2.0)",  # MathAPI has no state
    "MessageAPI": "add_contact(user_name='Zed Extra')",
    "TwitterAPI": "post_tweet(content='An extra post')",
    "TicketAPI": "create_ticket(title='Extra ticket')",
    "TradingBot": "add_to_watchlist(stock='ZETA')",
    "TravelAPI": "set_budget_limit(access_token='12345', budget_limit=100.0)",
    "VehicleControlAPI": "setHeadlights(mode='on')",
}
# Functions that leave every instance as it was; only used to pick a state-changing step.
READ_ONLY = {"cat", "diff", "du", "find", "grep", "ls", "pwd", "sort", "tail", "wc",
             "compute_exchange_rate", "filter_stocks_by_price", "gallon_to_liter", "liter_to_gallon",
             "verify_traveler_information", "find_nearest_tire_shop", "retrieve_invoice"}
READ_ONLY_PREFIXES = ("get_", "list_", "check_", "display", "estimate_", "search_", "view_")
MATH_FUNCTIONS = {json.loads(line)["name"] for line in
                  (CORPUS / "multi_turn_func_doc" / "math_api.json").read_text().splitlines() if line}


# ---------------------------------------------------------------- evaluator process (one round)

def evaluate_round():
    """Child process: evaluate every result file under $BFCL_PROJECT_ROOT/result, as BFCL's runner does."""
    # bfcl_shim stubs packages bfcl_eval imports but this run does not use. Two of them it
    # must not stub: `overrides` decorates the handler's decode_execute (a stand-in object
    # would replace the method) and `tqdm` wraps an iteration. Pass-through versions keep
    # BFCL's behaviour; the real packages are used when installed.
    if importlib.util.find_spec("overrides") is None:
        overrides = types.ModuleType("overrides")
        overrides.override = overrides.final = lambda func: func
        overrides.EnforceOverrides = type("EnforceOverrides", (), {})
        sys.modules["overrides"] = overrides
    if importlib.util.find_spec("tqdm") is None:
        tqdm = types.ModuleType("tqdm")
        tqdm.tqdm = lambda iterable=None, *args, **kwargs: iterable
        sys.modules["tqdm"] = tqdm

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import bfcl_shim  # noqa: F401  (must come before bfcl_eval)

    from bfcl_eval.constants.eval_config import RESULT_FILE_PATTERN, RESULT_PATH, SCORE_PATH
    from bfcl_eval.eval_checker.eval_runner import evaluate_task, get_handler
    from bfcl_eval.utils import extract_test_category, load_file

    # The body of eval_runner.runner, without its leaderboard CSV step.
    leaderboard_table = {}
    for subdir in sorted(p for p in RESULT_PATH.iterdir() if p.is_dir()):
        model_name = subdir.name
        handler = get_handler(model_name.replace("_", "/"))
        decoded = handler.decode_execute("[ls(a=True)]", has_tool_call_tag=False)
        assert decoded == ["ls(a=True)"], f"decode_execute is not BFCL's: {decoded!r}"
        for result_file in sorted(subdir.rglob(RESULT_FILE_PATTERN)):
            category = extract_test_category(result_file)
            model_result = load_file(result_file, sort_by_id=True)
            evaluate_task(category, RESULT_PATH, SCORE_PATH, model_result, model_name, handler,
                          leaderboard_table, allow_missing=True)


def run_round(round_index, results_by_category):
    """Evaluate one round in a fresh project root and process; {(category, id): (valid, type, message)}."""
    with tempfile.TemporaryDirectory(prefix=f"bfcl_mt_round{round_index}_") as project_root:
        result_dir = Path(project_root) / "result" / MODEL_FOLDER / "multi_turn"
        result_dir.mkdir(parents=True)
        for category, results in results_by_category.items():
            with open(result_dir / f"BFCL_v4_{category}_result.json", "w", encoding="utf-8") as f:
                for entry_id, result in results:
                    f.write(json.dumps({"id": entry_id, "result": result}) + "\n")
        env = dict(os.environ, BFCL_PROJECT_ROOT=project_root)
        proc = subprocess.run([sys.executable, "-s", str(Path(__file__).resolve()), "--evaluate-round"],
                              env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"round {round_index} failed:\n{proc.stdout}\n{proc.stderr}")

        verdicts = {}
        score_dir = Path(project_root) / "score" / MODEL_FOLDER / "multi_turn"
        for category, results in results_by_category.items():
            lines = (score_dir / f"BFCL_v4_{category}_score.json").read_text(encoding="utf-8").splitlines()
            header, failures = json.loads(lines[0]), [json.loads(line) for line in lines[1:]]
            ids = {entry_id for entry_id, _ in results}
            # The score file must account for exactly the entries written.
            assert header["total_count"] == len(results), (category, header)
            assert header["correct_count"] + len(failures) == len(results), (category, header)
            for failure in failures:
                assert failure["id"] in ids, failure["id"]
                assert failure["prompt"]["id"] == failure["id"], "prompt and result misaligned"
                error = failure["error"]
                message = error["error_message"]
                message = " ".join(message) if isinstance(message, list) else message
                verdicts[(category, failure["id"])] = (False, error["error_type"], message)
            for entry_id in ids:
                verdicts.setdefault((category, entry_id), (True, None, None))
        return verdicts


# ---------------------------------------------------------------- mutations

def step(calls):
    return "[" + ", ".join(calls) + "]"


def ground_truth_layout(gt):
    """One step per turn holding all its calls; a turn meant to fail gets a prose reply."""
    return [[step(calls)] if calls else [PROSE] for calls in gt]


def function_name(call):
    return call.split("(", 1)[0].strip()


def changes_state(call):
    name = function_name(call)
    if name in MATH_FUNCTIONS or name in READ_ONLY or name.startswith(READ_ONLY_PREFIXES):
        return False
    if name.endswith("_get_login_status"):
        return False
    if name == "echo" and "file_name" not in call:
        return False
    return True


def pick(items, n, salt=0):
    return items[(n + salt) % len(items)]


def string_arguments(call):
    """(start, end, value) of each keyword string argument, as character offsets in `call`."""
    tree = ast.parse(call, mode="eval").body
    if not isinstance(tree, ast.Call):
        return []
    raw = call.encode("utf-8")
    out = []
    for keyword in tree.keywords:
        node = keyword.value
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            # ast offsets count UTF-8 bytes.
            start = len(raw[:node.col_offset].decode("utf-8"))
            end = len(raw[:node.end_col_offset].decode("utf-8"))
            out.append((start, end, node.value))
    return out


def altered(value):
    """A plausible but different value: another file name, another word."""
    if "." in value.strip(".") and " " not in value:
        stem, ext = value.rsplit(".", 1)
        return f"{stem}_v2.{ext}"
    return value + "_v2" if value else "x"


def mutations(entry, gt, n):
    """(label, result) pairs for one entry; n, its place in the sample, picks turns and variants."""
    base = ground_truth_layout(gt)
    filled = [t for t, calls in enumerate(gt) if calls]
    empty = [t for t, calls in enumerate(gt) if not calls]
    multi = [t for t, calls in enumerate(gt) if len(calls) >= 2]
    classes = entry["involved_classes"]
    cases = [("ground_truth", base)]

    cases.append(("one_call_per_step",
                  [[step([c]) for c in calls] + [FINAL] if calls else [PROSE] for calls in gt]))

    # Three wrappings: a bare fence, padding, and a fence with a language tag (which BFCL's
    # prompting decoder does not strip).
    style = n % 3
    def fence(text):
        if style == 0:
            return f"```\n{text}\n```"
        if style == 1:
            return f"\n  {text}  \n\n"
        return f"```python\n{text}\n```"
    cases.append(("fenced", [[fence(step(calls))] if calls else [PROSE] for calls in gt]))

    cases.append(("turn_missing", base[:-1]))

    if filled:
        t = pick(filled, n)
        cases.append(("empty_turn", [[PROSE] if i == t else s for i, s in enumerate(base)]))

    if multi:
        t = pick(multi, n, 1)
        drop = pick(list(range(len(gt[t]))), n, 2)
        calls = [c for i, c in enumerate(gt[t]) if i != drop]
        cases.append(("call_dropped", [[step(calls)] if i == t else s for i, s in enumerate(base)]))

    targets = [(t, i, arg) for t in filled for i, c in enumerate(gt[t]) for arg in string_arguments(c)]
    if targets:
        t, i, (start, end, value) = pick(targets, n * 7, 3)
        call = gt[t][i]
        changed = call[:start] + repr(altered(value)) + call[end:]
        calls = [changed if j == i else c for j, c in enumerate(gt[t])]
        cases.append(("argument_changed", [[step(calls)] if k == t else s for k, s in enumerate(base)]))

    if filled:
        t = pick(filled, n, 4)
        cls = pick(classes, n)
        extra = READING_CALL[cls] if n % 2 == 0 else WRITING_CALL[cls]
        cases.append(("extra_call", [[step(gt[t] + [extra])] if i == t else s for i, s in enumerate(base)]))

    if empty:
        t = pick(empty, n)
        later = [u for u in filled if u > t]
        # Either act on the next request early (the call the turn lacked, guessed), or just look.
        if n % 2 == 0 and later:
            calls = gt[later[0]]
        else:
            calls = [READING_CALL[pick(classes, n)]]
        cases.append(("calls_in_empty_turn", [[step(calls)] if i == t else s for i, s in enumerate(base)]))

    if n % NOT_A_LIST_EVERY == 0:
        cases.append(("not_a_list", "Error during inference: the model did not return a list of turns."))

    if filled:
        t = pick(filled, n, 5)
        first = gt[t][0]
        garbage = [f"[{first[:first.index('(') + 1]}", "Let me check the current state first.",
                   "Thinking", "[]"][n % 4]
        cases.append(("undecodable_step", [[garbage, step(gt[t])] if i == t else s for i, s in enumerate(base)]))

    swappable = [t for t in multi if any(a != b for a, b in zip(gt[t], gt[t][1:]))]
    if swappable:
        t = pick(swappable, n, 6)
        pairs = [i for i in range(len(gt[t]) - 1) if gt[t][i] != gt[t][i + 1]]
        i = pick(pairs, n, 7)
        calls = list(gt[t])
        calls[i], calls[i + 1] = calls[i + 1], calls[i]
        cases.append(("order_swapped", [[step(calls)] if k == t else s for k, s in enumerate(base)]))

    changing = [t for t in filled if any(changes_state(c) for c in gt[t])]
    if changing:
        t = pick(changing, n, 8)
        cases.append(("step_duplicated", [[step(gt[t]), step(gt[t])] if i == t else s for i, s in enumerate(base)]))

    assert [label for label, _ in cases] == [m for m in MUTATIONS if m in dict(cases)]
    return cases


# ---------------------------------------------------------------- driver

def read_lines(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def check_corpus_matches_bfcl():
    """The cases are built from the vendored corpus; BFCL evaluates with its own copy."""
    spec = importlib.util.find_spec("bfcl_eval")
    if spec is None:
        sys.exit("bfcl_eval is not importable; put the bfcl-eval package on PYTHONPATH")
    data = Path(spec.origin).parent / "data"
    for category in CATEGORIES:
        for sub in ("", "possible_answer/"):
            ours, theirs = CORPUS / f"{sub}BFCL_v4_{category}.json", data / f"{sub}BFCL_v4_{category}.json"
            if ours.read_bytes() != theirs.read_bytes():
                sys.exit(f"{ours} differs from bfcl_eval's {theirs}")


def has_positional_argument(calls):
    for call in calls:
        tree = ast.parse(call, mode="eval").body
        if isinstance(tree, ast.Call) and tree.args:
            return True
    return False


def main():
    started = time.monotonic()
    check_corpus_matches_bfcl()

    cases = []  # (category, label, id, result)
    entries_by_id = {}
    for category in CATEGORIES:
        entries = read_lines(CORPUS / f"BFCL_v4_{category}.json")
        answers = {a["id"]: a["ground_truth"] for a in read_lines(CORPUS / "possible_answer" / f"BFCL_v4_{category}.json")}
        sampled = entries[OFFSETS[category]::STRIDE][:ENTRIES_PER_CATEGORY]
        classes = {c for e in sampled for c in e["involved_classes"]}
        assert classes == set(READING_CALL), f"{category} sample misses {set(READING_CALL) - classes}"
        # Picks go by place in the sample: entry numbers here are all even.
        for n, entry in enumerate(sampled):
            entries_by_id[entry["id"]] = (entry, answers[entry["id"]])
            for label, result in mutations(entry, answers[entry["id"]], n):
                cases.append((category, label, entry["id"], result))

    # Round k holds the k-th case of every entry, so no id appears twice in one process.
    rounds = {}
    position = Counter()
    for category, label, entry_id, result in cases:
        k = position[entry_id]
        position[entry_id] += 1
        rounds.setdefault(k, {}).setdefault(category, []).append((entry_id, result))

    verdicts = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=WORKERS) as pool:
        futures = {pool.submit(run_round, k, rounds[k]): k for k in sorted(rounds)}
        for future in concurrent.futures.as_completed(futures):
            k = futures[future]
            for (category, entry_id), verdict in future.result().items():
                verdicts[(k, category, entry_id)] = verdict

    lines = []
    position = Counter()
    messages = {}
    for category, label, entry_id, result in cases:
        k = position[entry_id]
        position[entry_id] += 1
        valid, error_type, message = verdicts[(k, category, entry_id)]
        messages[(entry_id, label)] = message
        lines.append({"id": entry_id, "category": category, "label": label, "result": result,
                      "valid": valid, "error_type": error_type})

    order = {c: i for i, c in enumerate(CATEGORIES)}
    lines.sort(key=lambda x: (order[x["category"]], int(x["id"].rsplit("_", 1)[1]), MUTATIONS.index(x["label"])))
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    with open(OUTPUT, "w", encoding="utf-8") as f:
        for line in lines:
            f.write(json.dumps(line, ensure_ascii=False) + "\n")

    print(f"wrote {len(lines)} cases to {OUTPUT.relative_to(ROOT)} ({OUTPUT.stat().st_size / 1e6:.2f} MB), "
          f"{len(rounds)} rounds, each a fresh evaluator process")
    for category in CATEGORIES:
        mine = [x for x in lines if x["category"] == category]
        print(f"  {category:26} {len(mine):5} cases, {sum(x['valid'] for x in mine):4} valid, "
              f"{len({x['id'] for x in mine})} entries")
    print(f"valid: {sum(x['valid'] for x in lines)} of {len(lines)}")
    print("error types:")
    for error_type, count in Counter(x["error_type"] for x in lines if not x["valid"]).most_common():
        print(f"  {error_type:45} {count}")
    print("verdicts by mutation (valid / invalid):")
    for label in MUTATIONS:
        mine = [x for x in lines if x["label"] == label]
        print(f"  {label:22} {sum(x['valid'] for x in mine):4} / {sum(not x['valid'] for x in mine):4}")

    # Sanity: the ground truth, written as one step a turn, should pass BFCL's own check.
    # Known exception: BFCL's prompting decoder drops positional arguments, and some
    # ground-truth calls are written with them, e.g. sort('final_report.pdf').
    failed = [x for x in lines if x["label"] == "ground_truth" and not x["valid"]]
    explained = [x for x in failed if has_positional_argument(c for t in entries_by_id[x["id"]][1] for c in t)]
    print(f"sanity: {sum(1 for x in lines if x['label'] == 'ground_truth') - len(failed)} ground_truth cases valid, "
          f"{len(failed)} not ({len(explained)} of them have positional arguments in their ground truth, "
          f"which BFCL's decoder drops)")
    for x in failed:
        positional = "positional" if x in explained else "UNEXPLAINED"
        print(f"  {x['id']} [{positional}] {x['error_type']}: {messages[(x['id'], 'ground_truth')]}")
    print(f"wall time: {time.monotonic() - started:.1f} s")


if __name__ == "__main__":
    if sys.argv[1:] == ["--evaluate-round"]:
        evaluate_round()
    else:
        main()
