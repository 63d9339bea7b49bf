"""Read the output of `node --trace-opt --trace-deopt passes.mjs` of several
processes from stdin, each process's lines prefixed by 'P<k> '; print one JSON
line a pass: its time and the optimizations completed and deoptimizations
V8 traced during it."""
import re

from passlines import by_pass


def count(record: dict, line: str) -> None:
    if line.startswith("[completed optimizing"):
        record["optimized"] += 1
    elif re.search(r"bailout \(kind|deoptimizing", line):
        record["deoptimized"] += 1


if __name__ == "__main__":
    by_pass({"optimized": 0, "deoptimized": 0}, count)
