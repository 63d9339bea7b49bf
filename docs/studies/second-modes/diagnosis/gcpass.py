"""Read the output of `node --trace-gc passes.mjs` of several processes from
stdin, each process's lines prefixed by 'P<k> '; print one JSON line a pass:
its time and the collections V8 ran during it (count and pause)."""
import json
import re
import sys

MARK = re.compile(r"PASS (\d+) (BEGIN|END)(?: ([\d.]+))?")
GC = re.compile(r"(Scavenge|Mark-Compact|Mark-Sweep|Minor Mark-Sweep)[^,]*?, ([\d.]+) / [\d.]+ ms")


def main() -> None:
    current: dict[str, dict] = {}
    for line in sys.stdin:
        proc, _, rest = line.partition(" ")
        if m := MARK.match(rest):
            if m[2] == "BEGIN":
                current[proc] = {"proc": proc, "pass": int(m[1]), "scavenge": 0,
                                 "scavenge_ms": 0.0, "major": 0, "major_ms": 0.0}
            else:
                done = current.pop(proc)
                done["ms"] = float(m[3])
                print(json.dumps(done))
        elif proc in current and (g := GC.search(rest)):
            kind = "scavenge" if g[1] == "Scavenge" else "major"
            current[proc][kind] += 1
            current[proc][kind + "_ms"] += float(g[2])


if __name__ == "__main__":
    main()
