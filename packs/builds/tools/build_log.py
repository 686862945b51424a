#!/usr/bin/env python3
"""The build_log tool: reads {"build": ...} as JSON on stdin and prints that build's log from
builds.csv: a long run of steps, then the result, which sits past the first screenful. Exits 1
with a message on stderr for a build the table does not have."""
import csv
import json
import os
import sys

STEPS = [
    "checkout: fetched 1 commit",
    "toolchain: rustc 1.95.0, cargo 1.95.0",
    "cache: restored 1,204 entries (412 MB)",
    "deps: 213 crates, 0 to download",
    "build: compiling 213 crates",
    "build: finished release profile in 4m 12s",
    "lint: clippy found 0 warnings",
    "format: 0 files to reformat",
    "test: running 1,482 tests in 58 binaries",
]

def main():
    call = json.load(sys.stdin)
    build = str(call.get("build", "")).strip().lstrip("#")
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "builds.csv"), newline="") as f:
        rows = {r["build"]: r for r in csv.DictReader(f)}
    if build not in rows:
        print(f"No build {build!r}: builds run from 4101 to 4121.", file=sys.stderr)
        return 1
    row = rows[build]
    lines = [f"Build {build} on branch {row['branch']}, commit {row['commit']}"]
    for i, step in enumerate(STEPS):
        lines.append(f"[{i:02d}:{(i * 17) % 60:02d}] {step}")
        lines.append(f"[{i:02d}:{(i * 17 + 9) % 60:02d}]   ok ({(i + 3) * 7} s)")
    for n in range(1, 15):
        lines.append(f"[09:{n * 4:02d}] test: binary {n:02d} of 58 passed ({n * 13 + 40} tests)")
    if row["result"] == "failed":
        lines.append(f"[10:02] test: FAILED {row['test']} ({row['reason']})")
        lines.append(f"[10:03] result: build {build} FAILED: 1 test failed: {row['test']}")
    else:
        lines.append(f"[10:02] result: build {build} PASSED: all tests passed")
    print("\n".join(lines))
    return 0

if __name__ == "__main__":
    sys.exit(main())
