#!/usr/bin/env python3
"""The notes tools: `notes.py create|list|delete` reads the call's arguments as JSON on stdin
and works on the notes in the folder $SKILLEVAL_SCRATCH names (a copy of ../world, brought to
the conversation's state by its earlier writes). A note is a file NAME.txt."""
import json
import os
import re
import sys


def note_path(folder, name):
    name = name.strip()
    if name.lower().endswith(".txt"):
        name = name[:-4]
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9 _-]{0,40}", name):
        return None, name
    return os.path.join(folder, name.lower().replace(" ", "-") + ".txt"), name


def main():
    action = sys.argv[1]
    call = json.load(sys.stdin)
    folder = os.environ.get("SKILLEVAL_SCRATCH")
    if not folder:
        print("notes.py runs only in a scratch folder (SKILLEVAL_SCRATCH)", file=sys.stderr)
        return 2
    if action == "list":
        names = sorted(f[:-4] for f in os.listdir(folder) if f.endswith(".txt"))
        print("Notes: " + ", ".join(names) + "." if names else "There are no notes.")
        return 0
    path, name = note_path(folder, str(call.get("name", "")))
    if path is None:
        print(f"{name!r} is not a note name: use letters, digits, spaces and dashes.", file=sys.stderr)
        return 1
    shown = os.path.basename(path)[:-4]
    if action == "create":
        if os.path.exists(path):
            print(f"A note named {shown} already exists; nothing was changed.", file=sys.stderr)
            return 1
        with open(path, "w") as f:
            f.write(str(call.get("text", "")))
        print(f"Created the note {shown}.")
        return 0
    if action == "delete":
        if not os.path.exists(path):
            print(f"There is no note named {shown}; nothing was deleted.", file=sys.stderr)
            return 1
        os.remove(path)
        print(f"Deleted the note {shown}.")
        return 0
    print(f"unknown action {action}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
