#!/usr/bin/env python3
"""The flight_status tool: reads {"flight": ...} as JSON on stdin and prints today's status of
that flight from flights.csv. Exits 1 with a message on stderr for a flight it does not know."""
import csv
import json
import os
import sys


def main():
    call = json.load(sys.stdin)
    flight = "".join(str(call.get("flight", "")).split()).upper()
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "flights.csv"), newline="") as f:
        rows = {r["flight"]: r for r in csv.DictReader(f)}
    row = rows.get(flight)
    if row is None:
        print(f"No flight {flight!r} today. Check the number on the booking.", file=sys.stderr)
        return 1
    parts = [row["status"]]
    if row["time"]:
        parts.append(row["time"])
    if row["gate"]:
        parts.append(f"from gate {row['gate']}")
    print(f"{row['flight']} {row['route']}: {', '.join(parts)}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
