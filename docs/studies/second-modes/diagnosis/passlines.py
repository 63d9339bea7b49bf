"""The pass splitter gcpass.py and optpass.py share: read the traces of
several processes from stdin, each line prefixed by 'P<k> ', between the
'PASS <i> BEGIN' and 'PASS <i> END <ms>' lines passes.mjs prints; print one
JSON line a pass, its counts filled by the caller's `count`."""
import json
import re
import sys
from typing import Callable

MARK = re.compile(r"PASS (\d+) (BEGIN|END)(?: ([\d.]+))?")


def by_pass(counts: dict, count: Callable[[dict, str], None]) -> None:
    """counts: a pass's counters at its start; count(record, line) adds a
    traced line of that process to its current pass."""
    current: dict[str, dict] = {}
    for line in sys.stdin:
        proc, _, rest = line.partition(" ")
        if m := MARK.match(rest):
            if m[2] == "BEGIN":
                current[proc] = {"proc": proc, "pass": int(m[1]), **counts}
            else:
                done = current.pop(proc)
                done["ms"] = float(m[3])
                print(json.dumps(done))
        elif proc in current:
            count(current[proc], rest)
