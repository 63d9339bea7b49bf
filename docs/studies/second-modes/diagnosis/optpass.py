"""Read the output of `node --trace-opt --trace-deopt passes.mjs` of several
processes from stdin, each process's lines prefixed by 'P<k> '; print one JSON
line a pass: its time and the optimizations completed and deoptimizations
V8 traced during it."""
import json
import re
import sys

MARK = re.compile(r"PASS (\d+) (BEGIN|END)(?: ([\d.]+))?")


def main() -> None:
    current: dict[str, dict] = {}
    for line in sys.stdin:
        proc, _, rest = line.partition(" ")
        if m := MARK.match(rest):
            if m[2] == "BEGIN":
                current[proc] = {"proc": proc, "pass": int(m[1]), "optimized": 0, "deoptimized": 0}
            else:
                done = current.pop(proc)
                done["ms"] = float(m[3])
                print(json.dumps(done))
        elif proc in current:
            if rest.startswith("[completed optimizing"):
                current[proc]["optimized"] += 1
            elif re.search(r"bailout \(kind|deoptimizing", rest):
                current[proc]["deoptimized"] += 1


if __name__ == "__main__":
    main()
