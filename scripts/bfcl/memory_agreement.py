"""Verdicts of BFCL's official evaluator on many memory results, as fixtures for ours.

Run with bfcl-eval importable (with its memory backends' rank_bm25, numpy and overrides):
  PYTHONPATH=/path/to/bfcl-eval python3 -s scripts/bfcl/memory_agreement.py
Writes tests/data/bfcl/memory_agreement.jsonl, one case a line, sorted by category, entry and
mutation:
  {"id", "category", "label", "result", "valid", "error_type"}
`result` is what a model run stores for the entry in BFCL's result file: one list (the one turn)
of raw step replies, or a bare string. `label` names the kind of reply; `valid` and
`error_type` are what BFCL gave it.

How the verdicts are made: the results are written as ordinary result files into a fresh BFCL
project root (`result/<model>/agentic/memory/<backend>/`) and evaluated in a fresh Python
process through `eval_runner.evaluate_task`, for a prompting model (Qwen/Qwen3-8B, whose handler
decodes with default_decode_execute_prompting), as `bfcl evaluate --partial-eval` reaches it;
the verdicts are read back from the score files BFCL writes (an entry absent from them passed).

Prints cases per category, valid count, error types and verdicts per label.
"""

import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "corpora" / "bfcl"
OUTPUT = ROOT / "tests" / "data" / "bfcl" / "memory_agreement.jsonl"

CATEGORIES = {"memory_kv": "kv", "memory_rec_sum": "rec_sum"}
MODEL = "Qwen/Qwen3-8B"
MODEL_FOLDER = MODEL.replace("/", "_")
# Every entry of the shared question file, in both categories: 155 each.
STRIDE = 1

# A call of each backend that reads and one that writes, in BFCL's prompting syntax.
READING_CALL = {"kv": "[core_memory_list_keys()]", "rec_sum": "[memory_retrieve()]"}
WRITING_CALL = {
    "kv": "[archival_memory_add(key='note', value={value!r})]",
    "rec_sum": "[memory_append(text={value!r})]",
}
LABELS = [
    "answer", "answer_after_calls", "answer_then_call", "restyled", "alternative", "in_prose",
    "double_spaced", "spaces_removed", "first_word", "hyphen_as_space", "inside_a_word", "wrong", "answer_only_in_a_call", "only_calls", "no_steps", "two_turns",
    "inference_error", "fenced_call_last",
]


def evaluate():
    """Child process: evaluate every result file under $BFCL_PROJECT_ROOT/result."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import bfcl_shim  # noqa: F401  (must come before bfcl_eval)

    from bfcl_eval.constants.eval_config import RESULT_FILE_PATTERN, RESULT_PATH, SCORE_PATH
    from bfcl_eval.eval_checker.eval_runner import evaluate_task, get_handler
    from bfcl_eval.utils import extract_test_category, load_file

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


def read_lines(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def answer(text):
    return "{'answer': " + repr(text) + ", 'context': 'I found it in my memory.'}"


def cases_for(backend, truth, n):
    """(label, result) pairs for one entry; n, its place in the file, picks variants."""
    first, last = truth[0], truth[-1]
    reading = READING_CALL[backend]
    writing = WRITING_CALL[backend].format(value=first)
    restyled = first.upper() + "." if n % 2 == 0 else "  " + first.lower() + "!"
    return [
        ("answer", [[answer(first)]]),
        ("answer_after_calls", [[reading, writing, answer(first)]]),
        ("answer_then_call", [[answer(first), reading]]),
        ("restyled", [[answer(restyled)]]),
        ("alternative", [[answer(last.lower())]]),
        ("in_prose", [[f"From what you told me earlier, it is {first}, as far as I remember."]]),
        # Near misses whose verdict depends on the answer's own spelling: BFCL drops some
        # punctuation but keeps whitespace.
        ("double_spaced", [[answer(first.replace(" ", "  "))]]),
        ("spaces_removed", [[answer(first.replace(" ", ""))]]),
        ("first_word", [[answer(first.split()[0] if first.split() else first)]]),
        ("hyphen_as_space", [[answer(first.replace("-", " ").replace("/", " "))]]),
        # The answer glued inside a longer word: BFCL's match is on word boundaries.
        ("inside_a_word", [[answer("x" + first + "q")]]),
        ("wrong", [[answer("I do not know")]]),
        ("answer_only_in_a_call", [[writing, "I cannot answer this question."]]),
        ("only_calls", [[reading]]),
        ("no_steps", [[]]),
        ("two_turns", [[answer(first)], [answer(first)]]),
        ("inference_error", "Error during inference: the backend failed."),
        ("fenced_call_last", [[answer(first), "```\n" + reading + "\n```"]]),
    ]


def main():
    questions = read_lines(CORPUS / "BFCL_v4_memory.json")
    answers = {a["id"]: a["ground_truth"] for a in read_lines(CORPUS / "possible_answer" / "BFCL_v4_memory.json")}
    cases = []
    for category, backend in CATEGORIES.items():
        for n, question in enumerate(questions[::STRIDE]):
            entry_id = question["id"].replace("memory", category)
            for label, result in cases_for(backend, answers[question["id"]], n):
                cases.append({"id": entry_id, "category": category, "label": label, "result": result})

    # One result line per id and file: each label is its own round of files.
    verdicts = {}
    with tempfile.TemporaryDirectory(prefix="bfcl_memory_") as scratch:
        for label in LABELS:
            project_root = Path(scratch) / label
            for category, backend in CATEGORIES.items():
                folder = project_root / "result" / MODEL_FOLDER / "agentic" / "memory" / backend
                folder.mkdir(parents=True)
                with open(folder / f"BFCL_v4_{category}_result.json", "w", encoding="utf-8") as f:
                    for case in cases:
                        if case["category"] == category and case["label"] == label:
                            f.write(json.dumps({"id": case["id"], "result": case["result"]}) + "\n")
            env = dict(os.environ, BFCL_PROJECT_ROOT=str(project_root))
            proc = subprocess.run([sys.executable, "-s", str(Path(__file__).resolve()), "--evaluate"],
                                  env=env, capture_output=True, text=True)
            if proc.returncode != 0:
                raise RuntimeError(f"{label} failed:\n{proc.stdout}\n{proc.stderr}")
            for category, backend in CATEGORIES.items():
                score = project_root / "score" / MODEL_FOLDER / "agentic" / "memory" / backend / f"BFCL_v4_{category}_score.json"
                lines = score.read_text(encoding="utf-8").splitlines()
                header, failures = json.loads(lines[0]), [json.loads(line) for line in lines[1:]]
                ids = [c["id"] for c in cases if c["category"] == category and c["label"] == label]
                assert header["total_count"] == len(ids), (category, label, header)
                assert header["correct_count"] + len(failures) == len(ids), (category, label, header)
                for failure in failures:
                    verdicts[(category, failure["id"], label)] = (False, failure["error"]["error_type"])
                for entry_id in ids:
                    verdicts.setdefault((category, entry_id, label), (True, None))

    for case in cases:
        case["valid"], case["error_type"] = verdicts[(case["category"], case["id"], case["label"])]
    cases.sort(key=lambda c: (c["category"], c["id"], LABELS.index(c["label"])))
    OUTPUT.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases), encoding="utf-8")

    print(f"{len(cases)} cases -> {OUTPUT.relative_to(ROOT)}")
    print("per category:", dict(Counter(c["category"] for c in cases)))
    print("valid:", sum(c["valid"] for c in cases))
    print("error types:", dict(Counter(c["error_type"] for c in cases if not c["valid"])))
    for label in LABELS:
        of_label = [c for c in cases if c["label"] == label]
        print(f"  {label}: {sum(c['valid'] for c in of_label)}/{len(of_label)} valid,",
              dict(Counter(c["error_type"] for c in of_label if not c["valid"])))


if __name__ == "__main__":
    if sys.argv[1:] == ["--evaluate"]:
        evaluate()
    else:
        main()
