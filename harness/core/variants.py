"""How an implementation is named on --impl: its id, optionally a release
(`IMPL@VERSION`, or a local source or build, `IMPL@path:DIR`) and settings (`IMPL[K=V;K2=V2;-flag]`), e.g.
`go[GOGC=off]`, `rust-tokio@1.5.0`, `java-virtual[-XX:+UseZGC]`. The
canonical label, `IMPL@VERSION[settings]`, is the implementation's name in
every row, table, plot and comparison: a variant or a release is a
configuration of its own, paired by that name across runs. Also the order
of releases, for the lists, bisect and the sweep plot."""

from __future__ import annotations

import dataclasses
import re
import unicodedata
from dataclasses import dataclass

from .. import UsageError
from . import local_builds
from .envinfo import SECRET_NAME, mask_value

# An environment variable's name, as POSIX shells accept it.
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# A release: digits, letters, dots, dashes, pluses and underscores
# (1.5.0, 22.12.0, 1.26.8, 1.0.0-rc.1, go1.26.8), never a path.
VERSION = re.compile(r"[0-9A-Za-z][0-9A-Za-z.+_-]*")
ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
# git:REV's revision: a commit, tag or branch (no option, no reflog syntax).
REVISION = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._/~^-]{0,199}")
# A release names a folder of .versions/ (at most 255 bytes) and is printed
# in every row: a registry's longer entry is not one.
MAX_RELEASE = 100


@dataclass(frozen=True)
class Spec:
    """One --impl name taken apart."""
    base: str  # the implementation's (or language's) own id
    version: str = ""  # a release (IMPL@VERSION); "" is the stock build
    env: tuple[tuple[str, str], ...] = ()  # K=V settings, in the order given
    flags: tuple[str, ...] = ()  # runtime flags (settings starting with "-" or "+")

    @property
    def settings(self) -> str:
        """The variant's settings as written in the label: "GOGC=off;-flag"
        ("" for none). Recorded in runs.csv's `variant` column."""
        return ";".join([f"{k}={v}" for k, v in self.env] + list(self.flags))

    @property
    def label(self) -> str:
        return (self.base + (f"@{self.version}" if self.version else "")
                + (f"[{self.settings}]" if self.settings else ""))

    def at(self, version: str) -> Spec:
        """The same configuration on another release (bisect's steps)."""
        return dataclasses.replace(self, version=version)

    @property
    def plain(self) -> bool:
        """No release and no settings: the implementation itself."""
        return not self.version and not self.env and not self.flags


def parse(text: str) -> Spec:
    """`IMPL`, `IMPL@VERSION`, `IMPL[settings]`, or both (`IMPL@VERSION[settings]`
    or `IMPL[settings]@VERSION`). A setting is K=V (an environment variable)
    or a runtime flag starting with "-" (or "+", Erlang's); settings are
    separated by ";".
    Bad input raises UsageError naming the part that is wrong."""
    # A label is printed in every table and on the terminal: a newline would
    # break report.md's rows, an ESC could drive the terminal.
    if any(unicodedata.category(ch) in ("Cc", "Zl", "Zp") for ch in text.strip()):
        raise UsageError(f"{text!r}: a control character (newline, ESC, ...) is not allowed "
                         f"in an implementation's name or settings")
    rest, settings = text.strip(), None
    if "[" in rest or "]" in rest:
        m = re.fullmatch(r"([^\[\]]*)\[([^\[\]]*)\]([^\[\]]*)", rest)
        if not m:
            raise UsageError(f"{text!r}: settings go in one pair of brackets, "
                             f"e.g. 'go[GOGC=off]' or 'java-virtual[-XX:+UseZGC]'")
        before, settings, after = m.groups()
        if after and not after.startswith("@"):
            raise UsageError(f"{text!r}: only @VERSION may follow the settings")
        rest = before + after
    base, _, version = rest.partition("@")
    if not ID.fullmatch(base):
        raise UsageError(f"{text!r}: {base!r} is not an implementation id")
    if local_builds.is_local(version):
        if len(version) == len(local_builds.PREFIX):
            raise UsageError(f"{text!r}: path: names a folder (e.g. {base}@path:../tokio)")
        version = local_builds.normal(version)
    elif local_builds.is_git(version):
        if not REVISION.fullmatch(version[len(local_builds.GIT):]):
            raise UsageError(f"{text!r}: git: names a commit, tag or branch (e.g. {base}@git:v1.2.0)")
    elif len(version) > MAX_RELEASE:
        raise UsageError(f"{base}@{version[:20]}...: a release is at most {MAX_RELEASE} characters")
    if ("@" in rest and not VERSION.fullmatch(version) and not local_builds.is_local(version)
            and not local_builds.is_git(version)):
        raise UsageError(f"{text!r}: {version!r} is not a release (e.g. rust-tokio@1.5.0)")
    env: list[tuple[str, str]] = []
    flags: list[str] = []
    if settings is not None:
        items = [s.strip() for s in settings.split(";")]
        if not any(items):
            raise UsageError(f"{text!r}: empty settings (write {base} for none)")
        for item in items:
            if not item:
                raise UsageError(f"{text!r}: an empty setting between ';'")
            if item.startswith(("-", "+")):  # +: Erlang's emulator flags (erl +P N)
                flags.append(item)
                continue
            name, eq, value = item.partition("=")
            if not eq or not ENV_NAME.fullmatch(name):
                raise UsageError(f"{text!r}: setting {item!r} is neither NAME=VALUE "
                                 f"nor a runtime flag starting with '-' or '+'")
            if SECRET_NAME.search(name.upper()):
                raise UsageError(f"{text!r}: {name} looks like a secret, and a variant's settings "
                                 f"are written into every row: pass it with --inherit-env instead")
            if name in dict(env):
                raise UsageError(f"{text!r}: {name} is set twice")
            env.append((name, value))
    return Spec(base, version, tuple(env), tuple(flags))


def split_names(text: str) -> list[str]:
    """A comma-separated --impl list, where a comma inside brackets belongs
    to a setting (`java[-XX:ActiveProcessorCount=1,x]` is one name)."""
    names, depth, current = [], 0, ""
    for ch in text:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth = max(0, depth - 1)
        if ch == "," and depth == 0:
            names.append(current.strip())
            current = ""
        else:
            current += ch
    names.append(current.strip())
    return [n for n in names if n]


def is_release(text: str) -> bool:
    """A name that can be a release: VERSION's characters, at most MAX_RELEASE."""
    return len(text) <= MAX_RELEASE and VERSION.fullmatch(text) is not None


def base_of(label: str) -> str:
    """The implementation id of a row's label: 'go' for 'go[GOGC=off]'
    (parse's; a label the reader took is always one parse takes)."""
    return parse(label).base


def release_key(version: str) -> tuple:
    """An order for the registries' several version schemes (semver, PEP
    440, Maven's, Go's): the numbers, then a release after its
    pre-releases. Hand-written: only this order is needed, and no one
    library parses all four schemes. A number is compared as its digits
    (by length, then text): int() refuses more than 4,300 digits."""
    m = re.match(r"v?(\d+(?:\.\d+)*)(.*)", version)
    if not m:
        return ((), 0, version)
    digits = [p.lstrip("0") for p in m.group(1).split(".")]
    numbers = tuple((len(d), d) for d in digits) + ((0, ""),) * (4 - len(digits))
    return (numbers, 1 if stable(version) else 0, m.group(2))


def stable(version: str) -> bool:
    """A release, not a pre-release (1.5.0, 1.26.8; not 1.0.0-rc.1, 1.21rc2)."""
    return re.fullmatch(r"v?\d+(?:\.\d+)*(?:\+[0-9A-Za-z.]+)?", version) is not None


def masked_spec(spec: Spec) -> Spec:
    """A variant as its label may show it: each setting keeps its name, its
    value masked by envinfo.mask_value (the program still gets the spec's own)."""
    return dataclasses.replace(spec, env=tuple((k, mask_value(v)) for k, v in spec.env),
                               flags=tuple(mask_value(f) for f in spec.flags))
