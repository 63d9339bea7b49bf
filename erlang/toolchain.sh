#!/bin/sh
# Finds, installs and drives the Erlang/OTP toolchain for impls.toml.
# Usage: toolchain.sh detect|setup|build|test
# The toolchain is Debian's Erlang/OTP: erlang-base (the VM, erlc, the
# standard libraries) and erlang-eunit (the test framework). When they are
# missing, setup apt-get installs them system-wide and says so first;
# BENCH_NO_SYSTEM_INSTALL=1 refuses (detect then fails, and the harness
# records erlang as skipped with that reason).
set -eu
cd "$(dirname "$0")"

PACKAGES="erlang-base erlang-eunit"

# The OTP version as the installed VM reports it (e.g. 25.2.3).
otp_version() {
    root=$(erl -noshell -eval 'io:put_chars(code:root_dir()), halt().')
    cat "$root/releases/$(erl -noshell -eval 'io:put_chars(erlang:system_info(otp_release)), halt().')/OTP_VERSION"
}

have_toolchain() {
    command -v erl >/dev/null 2>&1 && command -v erlc >/dev/null 2>&1 &&
        erl -noshell -eval 'halt(case code:which(eunit) of non_existing -> 1; _ -> 0 end).' 2>/dev/null
}

detect() {
    if have_toolchain; then
        otp_version
    elif [ "${BENCH_NO_SYSTEM_INSTALL:-}" = 1 ]; then
        echo "no Erlang/OTP with erlc and eunit, and BENCH_NO_SYSTEM_INSTALL=1 refuses to apt-get install $PACKAGES" >&2
        exit 1
    elif command -v apt-get >/dev/null 2>&1; then
        echo "(setup installs $PACKAGES)"
    else
        echo "no Erlang/OTP (erl, erlc, eunit) on PATH, and no apt-get to install $PACKAGES" >&2
        exit 1
    fi
}

setup() {
    have_toolchain && return 0
    if [ "${BENCH_NO_SYSTEM_INSTALL:-}" = 1 ]; then
        echo "erlang: BENCH_NO_SYSTEM_INSTALL=1 refuses to apt-get install $PACKAGES" >&2
        exit 1
    fi
    echo "erlang: installing Debian's $PACKAGES system-wide with apt-get (Erlang/OTP: the VM, erlc and eunit; about 17 MB installed; BENCH_NO_SYSTEM_INSTALL=1 refuses it)" >&2
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $PACKAGES >&2
}

build() {
    mkdir -p ebin
    erlc -Werror -o ebin src/*.erl
}

run_tests() {
    mkdir -p .eunit
    erlc -Werror -o .eunit test/*.erl
    # ERL_CRASH_DUMP_SECONDS=0: a failing test never leaves erl_crash.dump here.
    exec erl -noshell -env ERL_CRASH_DUMP_SECONDS 0 -pa ebin .eunit -eval \
        'halt(case eunit:test(bench_tests, [verbose]) of ok -> 0; _ -> 1 end).'
}

case "${1:-}" in
    detect) detect ;;
    setup) setup ;;
    build) build ;;
    # Builds first, so `make test` works on a fresh clone whatever the harness ran before.
    test) setup && build && run_tests ;;
    *) echo "usage: toolchain.sh detect|setup|build|test" >&2; exit 2 ;;
esac
