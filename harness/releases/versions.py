"""Other releases of an implementation's runtime or library (IMPL@VERSION):
which exist, from the package registry its impls.toml names
([impl.versions] source), newest first; whether a named one exists; those
between two releases (bisect); how big its download is (the announcement
before an install). Lists are cached for a day under .versions/index/, and
an older list is used when the registry cannot be reached."""

from __future__ import annotations

import json
import os
import re
import time
import urllib.error
import urllib.request
from pathlib import Path
from xml.etree import ElementTree

from .. import UsageError
from ..core import local_builds
from ..processes.children import run_contained
from ..core.registry import VERSIONS_DIR, Impl
from ..core.variants import is_release, release_key, stable

INDEX_DIR = VERSIONS_DIR / "index"
FRESH_S = 24 * 3600
TIMEOUT_S = 30

# The registries, by the first part of a source ("crates:tokio").
NPM = "https://registry.npmjs.org"
CRATES_INDEX = "https://index.crates.io"
CRATES_FILES = "https://static.crates.io/crates"
MAVEN = "https://repo1.maven.org/maven2"
PYPI = "https://pypi.org/pypi"
GO_TOOLCHAIN = "https://proxy.golang.org/golang.org/toolchain/@v"
WHERE = {"npm": "the npm registry", "crates": "crates.io", "maven": "Maven Central",
         "pypi": "PyPI", "go": "the Go module proxy"}


class Unreachable(Exception):
    """The registry did not answer and no earlier list is cached."""


def _get(url: str, accept: str = "*/*") -> bytes:
    request = urllib.request.Request(url, headers={"Accept": accept, "User-Agent": "concurrency-bench"})
    with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
        return response.read()


def _size(url: str) -> int | None:
    """A file's size from a HEAD request; None when the registry does not say."""
    request = urllib.request.Request(url, method="HEAD", headers={"User-Agent": "concurrency-bench"})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
            length = response.headers.get("Content-Length")
            return int(length) if length and length.isdigit() else None
    except (OSError, ValueError):
        return None


def _crate_path(name: str) -> str:
    """crates.io's sparse index layout: 1/a, 2/ab, 3/a/abc, ab/cd/abcd..."""
    lower = name.lower()
    if len(lower) <= 2:
        return f"{len(lower)}/{lower}"
    if len(lower) == 3:
        return f"3/{lower[0]}/{lower}"
    return f"{lower[:2]}/{lower[2:4]}/{lower}"


def _fetch(source: str) -> list[str]:
    """Every release the registry lists for a source (yanked ones left out)."""
    kind, _, name = source.partition(":")
    if kind == "npm":
        doc = json.loads(_get(f"{NPM}/{name}", "application/vnd.npm.install-v1+json"))
        return list(doc.get("versions", {}))
    if kind == "crates":
        lines = _get(f"{CRATES_INDEX}/{_crate_path(name)}").decode().splitlines()
        entries = [json.loads(line) for line in lines if line.strip()]
        return [e["vers"] for e in entries if not e.get("yanked")]
    if kind == "maven":
        group, _, artifact = name.partition(":")
        xml = _get(f"{MAVEN}/{group.replace('.', '/')}/{artifact}/maven-metadata.xml")
        return [v.text for v in ElementTree.fromstring(xml).iter("version") if v.text]
    if kind == "pypi":
        doc = json.loads(_get(f"{PYPI}/{name}/json"))
        return [v for v, files in doc.get("releases", {}).items()
                if files and not all(f.get("yanked") for f in files)]
    if kind == "go":
        # golang.org/toolchain's versions are v0.0.1-go1.26.8.linux-amd64
        lines = _get(f"{GO_TOOLCHAIN}/list").decode().split()
        return sorted({m.group(1) for line in lines
                       if (m := re.fullmatch(r"v0\.0\.1-go(.+)\.linux-amd64", line))})
    raise ValueError(f"unknown source {source!r}")


def _cache_file(impl: Impl) -> Path:
    versions = impl.versions
    assert versions is not None
    name = versions.source or f"list-{impl.base}"
    return INDEX_DIR / (re.sub(r"[^A-Za-z0-9._-]", "_", name) + ".json")


def available(impl: Impl, refresh: bool = False) -> list[str]:
    """The releases of an implementation's runtime or library, newest first
    (a day-old list from the cache, else the registry's; the cached one when
    the registry cannot be reached). Raises Unreachable when there is none."""
    versions = impl.versions
    if versions is None:
        raise UsageError(f"{impl.base} has no other releases to run (its impls.toml declares "
                         f"no [impl.versions])")
    if not (versions.source or versions.list):
        raise UsageError(f"{impl.base} has no releases to list, only local builds "
                         f"({impl.base}@path:DIR)")
    cache = _cache_file(impl)
    cached: list[str] | None = None
    try:
        doc = json.loads(cache.read_text())
    except (OSError, ValueError):  # none yet, or cut short: fetched again
        doc = None
    if doc is not None:
        if not (isinstance(doc, dict) and isinstance(doc.get("versions"), list)
                and all(isinstance(v, str) for v in doc["versions"])
                and type(doc.get("fetched_at")) in (int, float)):
            raise UsageError(f"{cache}: not a list of releases ({{\"fetched_at\": SECONDS, "
                             f"\"versions\": [TEXT]}}): remove it, and it is fetched again")
        cached = doc["versions"]
        if not refresh and time.time() - doc["fetched_at"] < FRESH_S:
            return cached
    try:
        if versions.list:
            proc = run_contained(impl.language.expand(versions.list), impl.language.dir,
                                 timeout_s=TIMEOUT_S)
            if proc.returncode != 0:
                raise OSError((proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1])
            found = proc.stdout.split()
        else:
            found = _fetch(versions.source)
    except (OSError, ValueError, ElementTree.ParseError) as exc:
        if cached is not None:
            return cached
        raise Unreachable(f"{where(impl)}: {exc}") from None
    # An entry no --impl could name (a path, 5,000 digits) is the registry's noise.
    found = sorted({v for v in found if is_release(v)}, key=release_key, reverse=True)
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_name(f".{cache.name}.{os.getpid()}")  # never half a list for the next run
        tmp.write_text(json.dumps({"fetched_at": time.time(), "versions": found}))
        tmp.replace(cache)
    except OSError:
        pass  # a read-only tree still lists
    return found


def _go_toolchain_here(release: str) -> bool:
    """The installed go is this release, or GOTOOLCHAIN fetched it before
    (into the module cache): building with it downloads nothing."""
    try:
        proc = run_contained(["go", "env", "GOVERSION", "GOMODCACHE"], Path.cwd(), timeout_s=TIMEOUT_S)
    except OSError:
        return False
    lines = proc.stdout.split()
    if proc.returncode != 0 or len(lines) != 2:
        return False
    cached = Path(lines[1]) / "golang.org" / f"toolchain@v0.0.1-go{release}.linux-amd64"
    return lines[0] == f"go{release}" or cached.is_dir()


def where(impl: Impl) -> str:
    """The registry and package, in words: "tokio on crates.io"."""
    if local_builds.is_local(impl.release):
        return str(local_builds.directory(impl.release))
    if local_builds.is_git(impl.release):
        return f"{impl.release} ({impl.local['subject']}) of {impl.local['source']}"
    versions = impl.versions
    if versions is not None and versions.origin:
        return versions.origin
    if versions is None or not versions.source:
        return f"{impl.base}'s release list"
    kind, _, name = versions.source.partition(":")
    return "Go toolchains on the Go module proxy" if kind == "go" else f"{name} on {WHERE[kind]}"


def check(impls: list[Impl]) -> list[str]:
    """Each asked-for release exists: UsageError naming the first that does
    not. Returns a note for each registry that could not be asked (the
    install then says whether the release exists)."""
    notes = []
    for impl in impls:
        if not impl.release or impl.local:  # a local build: checked by derive
            continue
        try:
            known = available(impl)
        except Unreachable as exc:
            notes.append(f"{impl.id}: cannot check the release ({exc})")
            continue
        if impl.release not in known:
            newest = next((v for v in known if stable(v)), None)
            raise UsageError(f"{impl.id}: no release {impl.release} of {where(impl)}"
                             + (f" (newest: {newest}; `list --versions {impl.base}`)" if newest else ""))
    return notes


def between(impl: Impl, good: str, bad: str) -> list[str]:
    """The releases from good to bad, both included, oldest first: those
    `bisect` searches (pre-releases left out, unless good or bad is one).
    Without a list there is nothing to search: a UsageError, before anything
    is measured."""
    try:
        known = available(impl)
    except Unreachable as exc:
        raise UsageError(f"bisect: cannot list the releases to search: {exc}") from None
    for v in (good, bad):
        if v not in known:
            raise UsageError(f"{impl.base}: no release {v} of {where(impl)}")
    low, high = sorted((good, bad), key=release_key)
    return [v for v in sorted(known, key=release_key)
            if release_key(low) <= release_key(v) <= release_key(high)
            and (stable(v) or v in (good, bad))]


def download_size(impl: Impl) -> int | None:
    """The release's own download in bytes (the package, crate, jar, wheel or
    toolchain; not its dependencies), where the registry says; 0 when it is
    already on this machine (a Go toolchain)."""
    versions, release = impl.versions, impl.release
    if impl.local:
        return 0
    if versions is None or not versions.source:
        return None
    kind, _, name = versions.source.partition(":")
    try:
        if kind == "npm":
            doc = json.loads(_get(f"{NPM}/{name}/{release}"))
            return _size(doc["dist"]["tarball"])
        if kind == "crates":
            return _size(f"{CRATES_FILES}/{name}/{name}-{release}.crate")
        if kind == "maven":
            group, _, artifact = name.partition(":")
            return _size(f"{MAVEN}/{group.replace('.', '/')}/{artifact}/{release}/{artifact}-{release}.jar")
        if kind == "pypi":  # the release's own /json page is not served everywhere
            doc = json.loads(_get(f"{PYPI}/{name}/json"))
            sizes = [f["size"] for f in doc.get("releases", {}).get(release, [])
                     if "x86_64" in f.get("filename", "")]
            return max(sizes) if sizes else None
        if kind == "go":
            return 0 if _go_toolchain_here(release) else _size(
                f"{GO_TOOLCHAIN}/v0.0.1-go{release}.linux-amd64.zip")
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return None
