"""The folders follow the run: each stage is a package that imports only
the stages before it (docs/harness.md draws the order), never a later one;
the wiring (cli, session, sequential, ab_gate, bisect, cluster) may import any stage
and no stage imports it. Within a stage, no import cycle; across modules,
nothing private."""

from __future__ import annotations

import ast
import functools
import re
from collections import Counter
from pathlib import Path

HARNESS = Path(__file__).resolve().parents[2]
# Stage packages in the order a run passes through them (processes and core
# are the shared base); a stage may import those at or below its rank.
RANKS = {"processes": 0, "core": 1, "plan": 2, "releases": 3, "execute": 4, "record": 5,
         "analyse": 6, "present": 7, "publish": 8}
WIRING = {"cli", "session", "sequential", "ab_gate", "bisect", "cluster", "__main__", ""}


def _modules() -> dict[str, Path]:
    found = {}
    for path in HARNESS.rglob("*.py"):
        rel = path.relative_to(HARNESS)
        if rel.parts[0] == "tests":
            continue
        parts = list(rel.with_suffix("").parts)
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


MODULES = _modules()


def _imports(name: str) -> list[tuple[str, str]]:
    """(absolute module under harness, imported name) for each relative import."""
    path = MODULES[name]
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level > 0:
            base = package[:len(package) - node.level + 1]
            module = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:
                sub = f"{module}.{alias.name}".lstrip(".")
                found.append((sub if sub in MODULES else module, alias.name))
    return found


def _stage(name: str) -> str:
    first = name.split(".")[0]
    return first if first in RANKS else "wiring"


def test_every_module_is_in_a_stage_or_the_wiring() -> None:
    loose = [n for n in MODULES if _stage(n) == "wiring" and n.split(".")[0] not in WIRING]
    assert not loose, f"modules in no stage: {loose}"


def test_stages_import_only_earlier_stages() -> None:
    back = [f"{name} imports {module}" for name in MODULES if _stage(name) != "wiring"
            for module, _ in _imports(name) if module
            if _stage(module) == "wiring" or RANKS[_stage(module)] > RANKS[_stage(name)]]
    assert not back, "imports against the run's direction:\n" + "\n".join(back)


def test_every_stage_says_what_it_owns_and_may_import() -> None:
    for stage in RANKS:
        doc = ast.get_docstring(ast.parse((HARNESS / stage / "__init__.py").read_text())) or ""
        assert len(doc) > 200 and "import" in doc, stage


def test_nothing_private_is_imported_across_modules() -> None:
    private = [f"{name}: {module}.{imported}" for name in MODULES
               for module, imported in _imports(name)
               if imported.startswith("_") and not imported.startswith("__")]
    assert not private


def test_no_module_both_plans_and_runs() -> None:
    """The plan decides what runs and starts nothing; the executor runs one
    planned run and decides nothing about which: neither imports the other's
    side, and the session, which wires them, does neither itself."""
    assert not {m for m, _ in _imports("plan.plan")} & {
        "processes.launcher", "execute.executor", "execute.builder", "execute.loadtest", "session"}
    session_calls = MODULES["session"].read_text()
    assert "run_process" not in session_calls and "measure_server" not in session_calls
    assert "def plan(" not in session_calls


def test_no_import_cycle() -> None:
    graph = {name: {m for m, _ in _imports(name) if m and m != name} for name in MODULES}
    done: set[str] = set()

    def visit(name: str, path: tuple[str, ...]) -> None:
        assert name not in path, " -> ".join(path + (name,))
        if name in done:
            return
        for dep in graph.get(name, ()):
            # a package's __init__ importing its own modules is no cycle
            if not dep.startswith(name + "."):
                visit(dep, path + (name,))
        done.add(name)

    for name in graph:
        visit(name, ())


# The record stage owns the run format's names; the declarations (core's
# schema, workloads, metrics, presentation) declare them.
FORMAT_OWNERS = {"core.schema", "core.workloads", "core.metrics", "core.presentation"}


def _format_names() -> set[str]:
    from harness.core.schema import DERIVED, ENV_KEYS, RUN_NAMES, SAMPLE_NAMES
    return set(RUN_NAMES) | set(SAMPLE_NAMES) | set(ENV_KEYS) | set(DERIVED)


def _metric_names() -> set[str]:
    from harness.core.metrics import METRICS
    return set(METRICS)


# The accessors that take a figure's or a dimension's name: Group's
# (analysis) and Row's (schema).
ACCESSORS = {"median", "values", "interval", "by_node", "figure", "param"}


def format_literals(name: str) -> list[tuple[int, str]]:
    """(line, name) where a module names a runs.csv column or an env.json key
    as a string literal: a subscript (row["wall_s"]), a get or getattr
    (row.get("node")), an accessor's argument (g.median("peak_rss_bytes")),
    a dict literal's key or a keyword-like tuple of names; and a metric's
    name (metrics.METRICS) as any literal at all (metric == "wall_s",
    rank(groups, "peak_rss_bytes")), a metric being named by its
    declaration's constant."""
    names, metrics = _format_names(), _metric_names()
    found = set()
    for node in ast.walk(ast.parse(MODULES[name].read_text())):
        if isinstance(node, ast.Constant) and node.value in metrics:
            found.add((node.lineno, node.value))
        keys: list[ast.expr] = []
        if isinstance(node, ast.Subscript):
            keys = [node.slice]
        elif isinstance(node, ast.Call) and node.args and (
                getattr(node.func, "attr", None) in ("get", "pop", "setdefault")
                or getattr(node.func, "id", None) in ("getattr", "setattr", "hasattr")):
            keys = [node.args[1] if getattr(node.func, "id", None) else node.args[0]] \
                if len(node.args) > (1 if getattr(node.func, "id", None) else 0) else []
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", None) in ACCESSORS:
            keys = node.args[:1]
        elif isinstance(node, ast.Dict):
            keys = [k for k in node.keys if k is not None]
        elif isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn))
                                                   for op in node.ops):
            keys = [node.left]
        found |= {(k.lineno, k.value) for k in keys
                  if isinstance(k, ast.Constant) and k.value in names}
    return sorted(found)


# Words other formats share with the run format's, each with its reason; a
# stale entry fails, so the list only shrinks.
OTHER_FORMATS: dict[str, set[str]] = {
    # settings.DEFAULTS' and LIMITS' keys (the options' names)
    "plan.settings": {"n", "duration_ms"},
    "cli": {"n", "duration_ms"},  # settings.DEFAULTS' keys (the options' names), in the help
    # impls.toml's tables ([language], [[impl]])
    "core.registry": {"language", "impl"},
    "execute.builder": {"language", "node"},  # impls.toml's [language]; Node.js's folder
    "cluster.layout": {"status"},  # build.json's readiness tables ({status, reason})
    # launch.c's report keys and Counters' fields, spelled as runs.csv's
    # columns: the processes stage ranks below core and cannot import them
    "processes.launcher": {"max_threads", "perf_cpu_migrations", "perf_cycles",
                           "perf_instructions"},
    "core.formatting": {"rps"},  # a unit kind (Metric.unit), not the metric
    "publish.figures": {"machine"},  # a column of docs/studies/first-run.tsv, the study's data
}


def test_only_the_record_stage_names_the_format() -> None:
    found = {name: format_literals(name) for name in sorted(MODULES)
             if not name.startswith("record") and name not in FORMAT_OWNERS}
    named = [f"{MODULES[name].relative_to(HARNESS.parent)}:{line}: {value!r}"
             for name, literals in found.items() for line, value in literals
             if value not in OTHER_FORMATS.get(name, set())]
    assert not named, f"{len(named)} names of the run format outside it:\n" + "\n".join(named)
    stale = {name: words - {v for _, v in found.get(name, [])}
             for name, words in OTHER_FORMATS.items()}
    assert not any(stale.values()), f"no longer there, drop from OTHER_FORMATS: {stale}"


# Rules the code keeps, each a function of a module's source, so that a test
# can feed it a planted violation: every finding is (line, what).

def _where(name: str, line: int) -> str:
    return f"{MODULES[name].relative_to(HARNESS.parent)}:{line}"


@functools.cache
def _sources() -> dict[str, str]:
    return {name: MODULES[name].read_text() for name in sorted(MODULES)}


# A run's outcome and a ladder step's verdict, by the names that hold them:
# an attribute (row.status), a variable, a key (row["status"],
# row.get("status")).
STATUS_NAMES = {"status", "step_verdict"}
# Status's and StepVerdict's home, the one place their texts are spelled.
STATUS_HOMES = {"core.schema"}


def _names_status(node: ast.expr) -> bool:
    if isinstance(node, ast.Attribute):
        return node.attr in STATUS_NAMES
    if isinstance(node, ast.Name):
        return node.id in STATUS_NAMES
    if isinstance(node, ast.Subscript):
        return isinstance(node.slice, ast.Constant) and node.slice.value in STATUS_NAMES
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get" and bool(node.args)
            and isinstance(node.args[0], ast.Constant) and node.args[0].value in STATUS_NAMES)


def _text(node: ast.expr | None) -> bool:
    """A string literal, or a tuple, list or set holding one."""
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_text(e) for e in node.elts)
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def status_literals(source: str) -> list[tuple[int, str]]:
    """(line, code) where a status is compared with a string literal
    (status == "ok", r.status in ("ok", "timeout")) or given one
    (x.status = "oom", Row(status="ok"), {"status": "ok"}): an enum
    member (Status.OK) says it, and a misspelling fails where it is read."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            bad = any(map(_names_status, sides)) and any(map(_text, sides))
        elif isinstance(node, ast.Assign):
            bad = any(map(_names_status, node.targets)) and _text(node.value)
        elif isinstance(node, ast.keyword):
            bad = node.arg in STATUS_NAMES and _text(node.value)
        elif isinstance(node, ast.Dict):
            bad = any(isinstance(k, ast.Constant) and k.value in STATUS_NAMES and _text(v)
                      for k, v in zip(node.keys, node.values))
        else:
            continue
        if bad:
            found.append((node.lineno, ast.unparse(node)))
    return sorted(found)


def test_no_status_is_spelled_as_a_string() -> None:
    found = [f"{_where(name, line)}: {code}" for name, source in _sources().items()
             if name not in STATUS_HOMES for line, code in status_literals(source)]
    assert not found, "a status spelled as a string, not its enum's member:\n" + "\n".join(found)


def test_the_status_rule_finds_a_planted_string() -> None:
    planted = ("def f(r, rows):\n"
               "    ok = [x for x in rows if x.status == Status.OK]\n"
               "    if r.status == 'ok' or r['status'] in ('oom', 'timeout'):\n"
               "        r.step_verdict = 'slow'\n"
               "    return Row(status='invalid'), {'status': 'ok'}, r.get('status') != 'x'\n")
    assert [line for line, _ in status_literals(planted)] == [3, 3, 4, 5, 5, 5]
    assert not status_literals("if r.status == Status.OK and r.name == 'ok':\n    pass\n")


# A function says one thing: the longest may run to this many lines, its
# def line to its last, docstring and comments included.
LONGEST = 60


def long_functions(source: str, longest: int = LONGEST) -> list[tuple[int, str]]:
    """(line, name (its length)) of each function or method longer than
    `longest` lines."""
    return [(node.lineno, f"{node.name} ({node.end_lineno - node.lineno + 1} lines)")
            for node in ast.walk(ast.parse(source))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and (node.end_lineno or node.lineno) - node.lineno + 1 > longest]


def test_no_function_is_longer_than_the_limit() -> None:
    found = [f"{_where(name, line)}: {what}" for name, source in _sources().items()
             for line, what in long_functions(source)]
    assert not found, f"functions over {LONGEST} lines:\n" + "\n".join(found)


def test_the_length_rule_finds_a_planted_long_function() -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(LONGEST - 1))
    at_limit = f"def fits():\n{body}"
    assert not long_functions(at_limit)
    planted = f"def long():\n{body}    return 1\n\n" + at_limit
    assert long_functions(planted) == [(1, f"long ({LONGEST + 1} lines)")]


# An exact copy: two functions whose bodies (docstring aside) are the same
# code, names and all, of at least this many statements.
COPY_STATEMENTS = 5


def _body_key(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """The function's body as code, without its docstring and positions;
    None when it is too short to count as a copy."""
    body = node.body[1:] if ast.get_docstring(node) is not None else node.body
    statements = sum(isinstance(n, ast.stmt) for stmt in body for n in ast.walk(stmt))
    return ast.dump(ast.Module(body=body, type_ignores=[])) \
        if statements >= COPY_STATEMENTS else None


def copied_functions(sources: dict[str, str]) -> list[list[tuple[str, int, str]]]:
    """Each set of functions of the modules (by name) with one body, as
    (module, line, function) each."""
    by_body: dict[str, list[tuple[str, int, str]]] = {}
    for name, source in sources.items():
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                    and (key := _body_key(node)) is not None:
                by_body.setdefault(key, []).append((name, node.lineno, node.name))
    return [found for found in by_body.values() if len(found) > 1]


def test_no_function_body_is_copied() -> None:
    found = ["; ".join(f"{_where(name, line)}: {fn}" for name, line, fn in copies)
             for copies in copied_functions(_sources())]
    assert not found, "the same function body twice (keep one, import it):\n" + "\n".join(found)


def test_the_copy_rule_finds_a_planted_copy() -> None:
    alive = ("def {}(pid):\n    '''{}'''\n    try:\n        os.kill(pid, 0)\n"
             "    except ProcessLookupError:\n        return False\n"
             "    except PermissionError:\n        pass\n    return True\n")
    found = copied_functions({"a": alive.format("_alive", "one"),
                              "b": "x = 1\n\n" + alive.format("alive", "another"),
                              "c": alive.format("other", "").replace("False", "None")})
    assert found == [[("a", 1, "_alive"), ("b", 3, "alive")]]
    short = "def f(x):\n    y = x + 1\n    return y\n"
    assert not copied_functions({"a": short, "b": short})


# Every number is formatted by core/formatting.py, so that one figure reads
# one way everywhere (and "1e+03 ms" is fixed once): what a reader sees (a
# table, a progress line, an error) and what a program reads (a data file's
# cell, a child's argument), each kind by a named function there. Every
# module keeps it but formatting.py itself.
# The formats that stay in place, each with its reason; a stale entry fails,
# so the list only shrinks.
IN_PLACE_FORMATS: dict[str, list[str]] = {
    # the timeout in the launcher's failure ("past its 30 s timeout"): the
    # processes stage ranks below core and may import nothing of the
    # harness but its root
    "processes.launcher": [":g"],
}


# A format spec that formats a number: a precision, or a number's type
# (`:.2f`, `:.0%`, `:,.0f`, `:g`, `:.3g`); not an alignment alone (`:<{width}`), nor a
# thousands separator alone (`:,`, a count as it is).
NUMBER_SPEC = re.compile(r"\.\d+|[eEfFgGn%dxXob]$")
PERCENT_DIRECTIVE = re.compile(r"%[-+ #0]*\d*(\.\d+)?[dieEfFgG]")


def _spec(node: ast.JoinedStr) -> str:
    return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)


def number_formats(source: str) -> list[tuple[int, str]]:
    """(line, format) of each number formatted in place: an f-string's
    number spec (f"{x:.2f}"), %-formatting of a number ("%.1f" % x), the
    format builtin (format(x, ".1f")) and str.format's number spec."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FormattedValue) and isinstance(node.format_spec, ast.JoinedStr) \
                and NUMBER_SPEC.search(spec := _spec(node.format_spec)):
            found.append((node.lineno, f":{spec}"))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) \
                and isinstance(node.left, ast.Constant) and isinstance(node.left.value, str) \
                and (m := PERCENT_DIRECTIVE.search(node.left.value)):
            found.append((node.lineno, m[0]))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id == "format" and len(node.args) == 2:
            found.append((node.lineno, "format()"))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "format" and isinstance(node.func.value, ast.Constant) \
                and isinstance(node.func.value.value, str):
            found += [(node.lineno, f":{spec}") for spec in
                      re.findall(r"\{[^{}:]*:([^{}]*)\}", node.func.value.value)
                      if NUMBER_SPEC.search(spec)]
    return sorted(found)


def test_numbers_are_formatted_by_formatting_only() -> None:
    found: list[str] = []
    stale: dict[str, list[str]] = {}
    for name, source in _sources().items():
        if name == "core.formatting":
            continue
        kept = Counter(IN_PLACE_FORMATS.get(name, []))
        for line, spec in number_formats(source):
            if kept[spec]:
                kept[spec] -= 1
            else:
                found.append(f"{_where(name, line)}: {spec}")
        if +kept:
            stale[name] = sorted(kept.elements())
    assert not found, ("numbers formatted in place, not by core/formatting.py:\n"
                       + "\n".join(found))
    assert not stale, f"no longer there, drop from IN_PLACE_FORMATS: {stale}"


def test_the_format_rule_finds_planted_formats() -> None:
    planted = ('a = f"{x:.2f}× {y:.0%} {n:,} {name:<{width}} {fmt_share(z)}"\n'
               'b = "%.1f ms" % t\n'
               'c = format(v, ".3g")\n'
               'd = "{k:g} of {who}".format(k=k, who=who)\n'
               'e = "100%% sure" % ()\n')
    assert number_formats(planted) == [(1, ":.0%"), (1, ":.2f"), (2, "%.1f"), (3, "format()"),
                                       (4, ":g")]
