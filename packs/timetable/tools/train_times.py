#!/usr/bin/env python3
"""The train_times tool: reads {"origin": ..., "destination": ...} as JSON on stdin and prints the
direct trains between the two stations from timetable.csv (either direction). Exits 1 with a
message on stderr when a station is unknown or no direct train runs."""
import csv
import json
import os
import sys

def norm(name):
    return " ".join(str(name).replace(",", " ").split()).casefold()

def main():
    call = json.load(sys.stdin)
    origin, destination = call.get("origin", ""), call.get("destination", "")
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "timetable.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    stations = {norm(r[k]): r[k] for r in rows for k in ("origin", "destination")}
    for name in (origin, destination):
        if norm(name) not in stations:
            print(f"No station called {name!r} on this network.", file=sys.stderr)
            return 1
    a, b = stations[norm(origin)], stations[norm(destination)]
    for r in rows:
        if {r["origin"], r["destination"]} == {a, b}:
            print(f"Direct trains from {a} to {b}: journey {r['journey_min']} min, "
                  f"first {r['first']}, last {r['last']}, every {r['every_min']} min.")
            return 0
    print(f"No direct train runs between {a} and {b}.", file=sys.stderr)
    return 1

if __name__ == "__main__":
    sys.exit(main())
