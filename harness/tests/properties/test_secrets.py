"""Secrets in the shell's environment never reach a run directory: the
programs' environment is recorded only for variables that affect runtimes,
and by name alone for every other."""

from __future__ import annotations

import csv
import json
import re
import subprocess
from pathlib import Path

from harness.core.envinfo import NOT_RECORDED, RUNTIME_NAMES, RUNTIME_PREFIXES, recorded, redact
from harness.core.schema import Env
from harness.present.report import environment_block

from ..conftest import harness

# report.html embeds its plots as base64; a short planted value turns up in a
# few hundred KB of random base64 now and then (CI once found "ss555" there).
# A plot is drawn from figures, never from the environment, so its payload is
# left out of the search.
EMBEDDED = re.compile(rb"data:image/png;base64,[A-Za-z0-9+/=]+")


def searched(path: Path) -> bytes:
    return EMBEDDED.sub(b"data:image/png;base64,", path.read_bytes())

SECRETS = {
    "SSH_PRIVATE_KEY": "-----BEGIN OPENSSH PRIVATE KEY-----fakekeymaterial0xC0FFEE",
    "DATABASE_URL": "postgres://bench:hunter2-pw-7f3a@db.example.com:5432/prod",
    "AWS_ACCESS_KEY_ID": "AKIAFAKE1234567890XY",
    # allow-listed names must not carry credentials either
    "UV_INDEX_URL": "https://ci-user:uv-pw-9b1c@pypi.example.com/simple",
    "JAVA_TOOL_OPTIONS": "-Xss1m -Djavax.net.ssl.keyStorePassword=jks-pw-44d2",
}
LEAKS = ["fakekeymaterial0xC0FFEE", "hunter2-pw-7f3a", "AKIAFAKE1234567890XY", "uv-pw-9b1c",
         "jks-pw-44d2"]


def test_planted_secrets_appear_in_no_file_of_the_run(tmp_path: Path) -> None:
    out = tmp_path / "results"
    env = dict(SECRETS, GOMAXPROCS="3")
    proc = harness("run", "--no-report", "--repeat", "1", "--impl", "fake-good", "--workload",
                   "chain", "--n", "5", "--out", str(out), extra_env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = harness("report", str(out / "latest"), extra_env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run = (out / "latest").resolve()
    files = [p for p in run.rglob("*") if p.is_file()]
    assert any(p.name == "results.json" for p in files) and any(p.name == "env.json" for p in files)
    for path in files:
        data = searched(path)
        for leak in LEAKS:
            assert leak.encode() not in data, f"{leak} in {path.relative_to(run)}"

    recorded = json.loads((run / "env.json").read_text())["program_env"]
    assert recorded["GOMAXPROCS"] == "3"  # what affects a runtime is kept, with its value
    # the programs never got them: not even their names are recorded
    assert "SSH_PRIVATE_KEY" not in recorded and "DATABASE_URL" not in recorded
    assert recorded["JAVA_TOOL_OPTIONS"].startswith("-Xss1m")
    assert list(recorded) == sorted(recorded)


def test_redact_keeps_runtime_variables_and_only_names_of_the_rest() -> None:
    got = redact({"PATH": "/usr/bin", "GODEBUG": "gctrace=1", "DOTNET_gcServer": "1",
                  "PYTHONHASHSEED": "0", "LC_ALL": "C", "HOME": "/root", "GITHUB_TOKEN": "ghp_x",
                  "UV_PUBLISH_TOKEN": "uvtok", "NODE_AUTH_TOKEN": "npmtok"})
    assert got == {"DOTNET_gcServer": "1", "GITHUB_TOKEN": NOT_RECORDED, "GODEBUG": "gctrace=1",
                   "HOME": NOT_RECORDED, "LC_ALL": "C", "NODE_AUTH_TOKEN": NOT_RECORDED,
                   "PATH": "/usr/bin", "PYTHONHASHSEED": "0", "UV_PUBLISH_TOKEN": NOT_RECORDED}


def test_the_load_generator_gets_no_variable_of_ours(monkeypatch) -> None:
    from harness.execute.loadgen import generator_env
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "planted-secret")
    env = generator_env("/tmp/home")
    assert set(env) == {"PATH", "HOME"}
    assert "planted-secret" not in env.values()


def test_erlang_flags_are_recorded_and_shown() -> None:
    env = redact({"ERL_FLAGS": "+S 2", "ERL_AFLAGS": "+P 10", "ERL_ZFLAGS": "+A 1",
                  "ELIXIR_ERL_OPTIONS": "+sbwt none"})
    assert NOT_RECORDED not in env.values()
    block = "\n".join(environment_block(Env({"program_env": env}), []))
    assert "`ERL_FLAGS=+S 2`" in block and "`ELIXIR_ERL_OPTIONS=+sbwt none`" in block


def test_the_report_shows_exactly_what_env_json_records() -> None:
    names = sorted(RUNTIME_NAMES) + [p + "X" for p in RUNTIME_PREFIXES] + [
        "HOME", "NODE_AUTH_TOKEN", "DOTNET_API_KEY", "SSL_CERT_FILE", "GOPATH", "XDG_RUNTIME_DIR"]
    env = redact({name: "v" for name in names})
    block = "\n".join(environment_block(Env({"program_env": env}), []))
    shown = {name for name in names if f"`{name}=" in block}
    assert shown == {name for name in names if recorded(name)}
    assert shown >= {"ERL_FLAGS", "GOMAXPROCS", "PATH"} and "NODE_AUTH_TOKEN" not in shown


# Values that passed the masking before: a / or an @ in a URL's password,
# secrets in JVM options by key name, a .NET connection string.
HARD = {
    "UV_EXTRA_INDEX_URL": ("https://ci:pa/ss666@host/simple", "pa/ss666"),
    "UV_INDEX_URL": ("https://ci:p@ss555@host", "ss555"),
    "JAVA_TOOL_OPTIONS": ("-Xss1m -Dnewrelic.config.license_key=lk-7781", "lk-7781"),
    "JDK_JAVA_OPTIONS": ("-Ddb.pwd=dbpw-5512 -Dapi.key=ak-9903 -XX:+UseZGC", "dbpw-5512"),
    "DOTNET_ConnectionStrings__Db": ("Server=db;User Id=sa;Pwd=cs-pw-3141;", "cs-pw-3141"),
    "NODE_OPTIONS": ("--max-old-space-size=64 --secret-token=nt-2718", "nt-2718"),
}


def test_hard_secrets_are_masked_in_every_output_file(tmp_path: Path) -> None:
    out = tmp_path / "results"
    env = {k: v for k, (v, _) in HARD.items()}
    proc = harness("run", "--repeat", "1", "--impl", "fake-good", "--workload", "chain", "--n",
                   "5", "--out", str(out), extra_env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run = (out / "latest").resolve()
    names = {p.name for p in run.rglob("*")}
    assert {"env.json", "results.json", "report.md"} <= names
    for path in (p for p in run.rglob("*") if p.is_file()):
        data = searched(path)
        for _, leak in HARD.values():
            assert leak.encode() not in data, f"{leak} in {path.relative_to(run)}"
        assert b"ak-9903" not in data
    recorded = json.loads((run / "env.json").read_text())["program_env"]
    assert recorded["JDK_JAVA_OPTIONS"].endswith("-XX:+UseZGC")  # the rest of the value stays
    assert recorded["NODE_OPTIONS"].startswith("--max-old-space-size=64")


def test_programs_get_an_allow_listed_environment(tmp_path: Path) -> None:
    """A program that prints its environment prints only the allow-list (and
    what --inherit-env names): a shell's secret never reaches runs.csv's
    output; env.json records exactly the names the program got."""
    planted = {"GITHUB_TOKEN": "ghp-planted-1618", "MY_APP_DIR": "/srv/app",
               "NODE_AUTH_TOKEN": "npm-4669", "GOGC": "200"}
    out = tmp_path / "results"
    proc = harness("run", "--no-report", "--repeat", "1", "--impl", "fake-good", "--workload",
                   "chain", "--n", "5", "--out", str(out), "--inherit-env", "MY_APP_DIR",
                   extra_env=planted)
    assert proc.returncode == 0, proc.stderr
    run = (out / "latest").resolve()
    with (run / "runs.csv").open(newline="") as f:
        [row] = list(csv.DictReader(f))
    got = set(json.loads(row["output"])["env_names"])
    assert "GOGC" in got and "MY_APP_DIR" in got and "PATH" in got
    assert not got & {"GITHUB_TOKEN", "NODE_AUTH_TOKEN"}
    for path in (p for p in run.rglob("*") if p.is_file()):
        assert b"ghp-planted-1618" not in path.read_bytes() and b"npm-4669" not in path.read_bytes()
    env = json.loads((run / "env.json").read_text())
    # the run's own empty cache folders aside
    assert set(env["program_env"]) == got - {"XDG_CACHE_HOME", "DENO_DIR", "NODE_COMPILE_CACHE",
                                            "BUN_RUNTIME_TRANSPILER_CACHE_PATH"}
    assert env["settings"]["inherit_env"] == ["MY_APP_DIR"]
    proc = harness("run", "--dry-run", "--impl", "fake-good", "--inherit-env", "A-B")
    assert proc.returncode == 2 and "not an environment variable name" in proc.stderr


# ---- credentials a program is handed: in variant settings, runtime variables,
# --inherit-env; a program that prints its environment and arguments ----

# Prints the fake's answer with its environment and arguments on stdout, and
# both on stderr; "crash" then exits 1, so that stderr_tail and error are kept.
PRINTER = """
import hashlib, json, os, subprocess, sys
mode, args = sys.argv[1], sys.argv[2:]
flags = [a for a in args if a.startswith("-D")]
args = [a for a in args if a not in flags]
out = json.loads(subprocess.run([sys.executable, {fake!r}, "--mode", "good", *args],
                                capture_output=True, text=True, check=True).stdout)
seen = {{"env": dict(os.environ), "argv": sys.argv}}
# what the program got, checkable without printing it in the clear
out.update(seen, got=hashlib.sha256((os.environ.get("GOPROXY", "") + " ".join(flags)).encode()).hexdigest())
print(json.dumps(seen), file=sys.stderr)
print("last:", os.environ.get("GOPROXY"), *flags, os.environ.get("MY_API_TOKEN"), file=sys.stderr)
print(json.dumps(out))
sys.exit(1 if mode == "crash" else 0)
"""
PLANTED = {
    "UV_INDEX_URL": ("https://ci-user:uvidx-pw-8812@pypi.example.com/simple", "uvidx-pw-8812"),
    "UV_EXTRA_INDEX_URL": ("https://ci:extra/pw-7741@extra.example.com", "extra/pw-7741"),
    "JAVA_TOOL_OPTIONS": ("-Xss1m -Djavax.net.ssl.trustStorePassword=jto-pw-6631", "jto-pw-6631"),
    "JDK_JAVA_OPTIONS": ("-Ddb.password=jdk-pw-5521 -XX:+UseZGC", "jdk-pw-5521"),
    "MY_API_TOKEN": ("inherited-tok-4411", "inherited-tok-4411"),  # given by --inherit-env
}
PROXY = "https://ci:hunter2xyz@proxy.example.com"
FLAG = "-Dapi.key=apikey-9931"
VARIANT = f"[GOPROXY={PROXY};{FLAG}]"
SHOWN = "[GOPROXY=https://<redacted>@proxy.example.com;-Dapi.key=<redacted>]"
LEAKED = ["hunter2xyz", "apikey-9931"] + [leak for _, leak in PLANTED.values()]


def printer_registry(folder: Path) -> Path:
    from ..conftest import FAKES
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "printer.py").write_text(PRINTER.format(fake=str(FAKES / "fake" / "fake.py")))
    impls = "\n".join(f"""
[[impl]]
id = "printer-{mode}"
run = ["{{python}}", "{{dir}}/printer.py", "{mode}", "{{flags}}"]
workloads = ["chain"]
""" for mode in ("ok", "crash"))
    path = folder / "impls.toml"
    path.write_text('[language]\nname = "printer"\ndetect = ["{python}", "-c", "print(1)"]\n'
                    'build = ["{python}", "-c", "pass"]\ntest = ["{python}", "-c", "pass"]\n'
                    + impls)
    return path


def run_printers(out: Path, registry: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return harness("run", "--repeat", "1", "--impl", f"printer-ok{VARIANT},printer-crash{VARIANT}",
                   "--workload", "chain", "--n", "5", "--out", str(out), "--registry",
                   str(registry), "--inherit-env", "MY_API_TOKEN", *extra,
                   extra_env={k: v for k, (v, _) in PLANTED.items()})


def test_credentials_handed_to_a_program_are_in_no_file(tmp_path: Path) -> None:
    """Variant settings (a URL's password, -Dapi.key=), runtime variables and an
    --inherit-env variable holding secrets: the program gets each one and
    prints them all, to stdout and stderr; no file of the run, report and
    exports included, holds any of them. The label keeps each setting's name."""
    import hashlib
    out = tmp_path / "results"
    registry = printer_registry(tmp_path / "printer")
    proc = run_printers(out, registry)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # the crashing one
    run = (out / "latest").resolve()
    assert {"runs.csv", "samples.csv", "env.json", "summary.csv", "results.json",
            "report.md"} <= {p.name for p in run.iterdir()}
    for path in (p for p in run.rglob("*") if p.is_file()):
        data = searched(path)
        for leak in LEAKED:
            assert leak.encode() not in data, f"{leak} in {path.relative_to(run)}"
    with (run / "runs.csv").open(newline="") as f:
        rows = {r["impl"]: r for r in csv.DictReader(f)}
    assert set(rows) == {f"printer-ok{SHOWN}", f"printer-crash{SHOWN}"}
    ok, crashed = rows[f"printer-ok{SHOWN}"], rows[f"printer-crash{SHOWN}"]
    assert ok["status"] == "ok" and crashed["status"] == "crashed"
    assert ok["variant"] == SHOWN[1:-1] and "-Dapi.key=<redacted>" in ok["command"]
    # the program got the values themselves
    got = json.loads(ok["output"])
    assert got["got"] == hashlib.sha256((PROXY + FLAG).encode()).hexdigest()
    assert got["env"]["GOPROXY"] == "https://<redacted>@proxy.example.com"
    assert got["env"]["MY_API_TOKEN"] == "<redacted>"
    assert "<redacted>" in crashed["stderr_tail"] and "<redacted>" in crashed["error"]
    env = json.loads((run / "env.json").read_text())
    assert env["variants"][f"printer-ok{SHOWN}"]["env"] == {
        "GOPROXY": "https://<redacted>@proxy.example.com"}


def test_resume_and_compare_match_a_masked_variant(tmp_path: Path) -> None:
    """The plan's key and the stored key are both the masked label: --resume
    finds the ok row done, compare pairs the configuration across runs."""
    out = tmp_path / "results"
    registry = printer_registry(tmp_path / "printer")
    assert run_printers(out, registry, "--no-report").returncode == 1
    first = (out / "latest").resolve()
    proc = run_printers(out, registry, "--no-report", "--resume")
    assert "1 runs already ok" in proc.stdout, proc.stdout + proc.stderr
    with (first / "runs.csv").open(newline="") as f:
        assert [r["status"] for r in csv.DictReader(f)] == ["ok", "crashed"]  # crashed: again
    assert run_printers(out, registry, "--no-report").returncode == 1
    proc = harness("compare", str(first), str(out / "latest"))
    assert proc.returncode in (0, 1), proc.stderr
    assert f"printer-ok{SHOWN}" in proc.stdout and "nothing in common" not in proc.stdout
