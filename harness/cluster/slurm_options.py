"""--slurm-opt read as sbatch reads its options (getopt_long: a long option
may be any unique prefix of its name, its value after `=` or in the next
word; short options bundle, a value attached or in the next word), so that
no spelling of an option the harness sets (`--outp=X`, `--arr 1-50`, `-oX`,
`-vD/`) gets past, and no word reaches sbatch as its batch script.
"""

from __future__ import annotations

from .. import UsageError

# What the harness sets on every sbatch, or relies on sbatch not doing: the
# array is the replicates, the outputs go where the merge reads them, the
# build job is the dependency, every task starts in the checkout, one node
# a replicate, the id is read from --parsable output of a job submitted now.
OWNED_LONG = ("array", "chdir", "dependency", "error", "kill-on-invalid-dep", "nodes", "output",
              "parsable", "partition", "wrap", "wait", "test-only", "help", "usage", "version")
OWNED_SHORT = "aDdeNopWhuV"
# sbatch's long options that take a value (in the next word when no `=`);
# those whose value is optional take it only after `=`.
VALUED_LONG = frozenset((
    "account", "acctg-freq", "array", "batch", "bb", "bbf", "begin", "chdir", "clusters",
    "cluster-constraint", "comment", "constraint", "container", "container-id", "core-spec",
    "cores-per-socket", "cpu-freq", "cpus-per-gpu", "cpus-per-task", "deadline", "delay-boot",
    "dependency", "distribution", "error", "exclude", "export", "export-file", "extra",
    "extra-node-info", "gid", "gpu-bind", "gpu-freq", "gpus", "gpus-per-node",
    "gpus-per-socket", "gpus-per-task", "gres", "gres-flags", "hint", "input", "job-name",
    "kill-on-invalid-dep", "licenses", "mail-type", "mail-user", "mcs-label", "mem", "mem-bind",
    "mem-per-cpu", "mem-per-gpu", "mincpus", "network", "nodefile", "nodelist", "nodes",
    "ntasks", "ntasks-per-core", "ntasks-per-gpu", "ntasks-per-node", "ntasks-per-socket",
    "open-mode", "output", "partition", "power", "prefer", "priority", "profile", "qos",
    "reservation", "segment", "signal", "sockets-per-node", "switches", "thread-spec",
    "threads-per-core", "time", "time-min", "tmp", "tres-bind", "tres-per-task", "uid",
    "wait-all-nodes", "wckey", "wrap"))
FLAG_LONG = frozenset((
    "contiguous", "exclusive", "get-user-env", "help", "hold", "ignore-pbs", "nice", "no-kill",
    "no-requeue", "overcommit", "oversubscribe", "parsable", "propagate", "quiet", "reboot",
    "requeue", "resv-ports", "spread-job", "test-only", "usage", "use-min-nodes", "verbose",
    "version", "wait", "x11"))
VALUED_SHORT = "AaBbCcDdeFGiJLMmNnopqStwx"
WHY = ("is set by the harness (the array is the replicates, the outputs go into the run "
       "directory, the build job is the dependency, each task starts in the checkout on one "
       "node, --partition and --nodes are the harness's own options) or stops sbatch from "
       "submitting")


def _long_name(word: str) -> str | None:
    """The sbatch option a long option's word names (a unique prefix, or an
    exact name), or None when sbatch does not know it or it is ambiguous."""
    known = VALUED_LONG | FLAG_LONG
    if word in known:
        return word
    found = [name for name in known if name.startswith(word)]
    return found[0] if len(found) == 1 else None


def check(words: list[str]) -> None:
    """Refuse (UsageError, one line) any word of --slurm-opt that names an
    option the harness owns, by any spelling sbatch accepts, and any word
    that is neither an option nor an option's value."""
    value_next = False
    for word in words:
        if value_next:  # the previous option's value, whatever it looks like
            value_next = False
            continue
        if word == "--" or not word.startswith("-") or word == "-":
            raise UsageError(f"--slurm-opt: {word!r} is no option nor an option's value: sbatch "
                             f"would take it as the batch script (give values as --opt=VALUE)")
        if word.startswith("--"):
            name, eq, _ = word[2:].partition("=")
            if any(owned.startswith(name) for owned in OWNED_LONG):
                raise UsageError(f"--slurm-opt: {word.partition('=')[0]} {WHY}")
            full = _long_name(name)
            value_next = not eq and full in VALUED_LONG
            continue
        for i, letter in enumerate(word[1:], 1):
            if letter in OWNED_SHORT:
                within = f" (in {word})" if len(word) > 2 else ""
                raise UsageError(f"--slurm-opt: -{letter} {WHY}{within}")
            if letter in VALUED_SHORT:  # the rest of the word is its value, or else the next word
                value_next = i == len(word) - 1
                break
    if value_next:
        raise UsageError(f"--slurm-opt: {words[-1]!r} needs a value")
