"""Read the output of `node --trace-gc passes.mjs` of several processes from
stdin, each process's lines prefixed by 'P<k> '; print one JSON line a pass:
its time and the collections V8 ran during it (count and pause)."""
import re

from passlines import by_pass

GC = re.compile(r"(Scavenge|Mark-Compact|Mark-Sweep|Minor Mark-Sweep)[^,]*?, ([\d.]+) / [\d.]+ ms")


def count(record: dict, line: str) -> None:
    if g := GC.search(line):
        kind = "scavenge" if g[1] == "Scavenge" else "major"
        record[kind] += 1
        record[kind + "_ms"] += float(g[2])


if __name__ == "__main__":
    by_pass({"scavenge": 0, "scavenge_ms": 0.0, "major": 0, "major_ms": 0.0}, count)
