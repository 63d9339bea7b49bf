#!/bin/sh
# A one-node Slurm cluster on this machine, for `run --on slurm` without a
# cluster and for make test (harness/tests/wiring/test_slurm.py).
# Usage: cluster/slurm-local.sh install|up|down|env|status
#
#   install install Debian's slurmctld, slurmd, slurm-client and munge when
#           missing, as up does, and start nothing (a test of sbatch's own
#           parser needs no daemon)
#   up      install Debian's slurmctld, slurmd, slurm-client and munge when
#           missing (system-wide with apt-get, said first; refused under
#           BENCH_NO_SYSTEM_INSTALL=1), then start munged, slurmctld and slurmd
#           directly (no init system is needed): one node with this machine's
#           CPUs and memory (slurmd -C), in one partition, `bench`
#   down    cancel every job, stop the three daemons and wait until none of
#           their processes (nor a job's) is left; remove the state folder
#           (daemons of the folder are found by their command line, so those
#           of an earlier up whose pid files are gone are stopped too)
#   env     print the line that points Slurm's commands at this cluster:
#           eval "$(cluster/slurm-local.sh env)"
#   status  the node and partition as Slurm sees them (sinfo)
#
# Everything of the cluster lives in one folder, $BENCH_SLURM_DIR (default
# /var/tmp/bench-slurm): its slurm.conf (Slurm's commands find it through
# SLURM_CONF), munge key and socket, state, spool, pid files and logs. Nothing
# is written to /etc, and the ports (6917, 6918) and munge socket are not
# the defaults, so a real Slurm on the machine is left alone. No accounting
# daemon: sacct has nothing to say here, and the harness does without it.
# up marks the folder it makes (.made-by-slurm-local); down acts only on a
# marked folder, and only on the daemons this script started (exit 2 otherwise).
# An interrupted run may leave the daemons of an earlier up running with their
# folder removed or made again: up stops those (said on stderr) before it
# starts its own, and refuses in one line, exit 2, starting nothing, when
# anything else holds one of the ports.
set -eu

DIR=${BENCH_SLURM_DIR:-/var/tmp/bench-slurm}
CONF=$DIR/slurm.conf
PACKAGES="slurmctld slurmd slurm-client munge"
PARTITION=bench
PORTS="6917 6918"  # slurmctld's, slurmd's
WAIT_S=30  # the longest wait for a daemon to start or stop, or the jobs to end

say() { echo "slurm-local: $*" >&2; }
die() { say "$*"; exit 1; }

as_root() {
    [ "$(id -u)" -eq 0 ] && return 0
    command -v sudo >/dev/null 2>&1 || die "must run as root (slurmd starts the jobs as their users), and there is no sudo"
    exec sudo --preserve-env=BENCH_NO_SYSTEM_INSTALL,BENCH_SLURM_DIR -- "$0" "$@"
}

installed() {
    for tool in slurmctld slurmd sbatch munged; do
        command -v "$tool" >/dev/null 2>&1 || [ -x "/usr/sbin/$tool" ] || return 1
    done
}

install() {
    installed && return 0
    if [ "${BENCH_NO_SYSTEM_INSTALL:-}" = 1 ]; then
        die "BENCH_NO_SYSTEM_INSTALL=1 refuses to apt-get install $PACKAGES"
    fi
    command -v apt-get >/dev/null 2>&1 || die "no Slurm here and no apt-get to install $PACKAGES"
    say "installing Debian's $PACKAGES system-wide with apt-get (Slurm's controller, node daemon and commands, and MUNGE, with libhwloc and liblua; on Debian 12 about 3.3 MB downloaded, 13 MB installed; BENCH_NO_SYSTEM_INSTALL=1 refuses it)"
    timeout 600 apt-get update -qq
    # Debian's packages would start their daemons from /etc/init.d where an
    # init system runs: this script starts its own, with its own files.
    # shellcheck disable=SC2086 # the list, one word a package
    DEBIAN_FRONTEND=noninteractive timeout 600 apt-get install -y -qq --no-install-recommends $PACKAGES >&2
}

of_this_folder() {  # of_this_folder PID NAME: a daemon this script started for this
                    # cluster: /usr/sbin/NAME, an argument of it in this cluster's folder
    # Debian's slurmctld and slurmd are alternatives (/usr/sbin/slurmd ->
    # /etc/alternatives/slurmd -> /usr/sbin/slurmd-wlm): the process's exe is the last.
    [ "$(readlink "/proc/$1/exe" 2>/dev/null)" = "$(readlink -f "/usr/sbin/$2")" ] || return 1
    # an argument that is a path in the folder, or an option's (--socket=PATH): not
    # one that merely contains it (/other$DIR/slurm.conf)
    tr '\0' '\n' <"/proc/$1/cmdline" 2>/dev/null | {
        while IFS= read -r arg; do
            case $arg in "$DIR"/*|--*="$DIR"/*) exit 0 ;; esac
        done
        exit 1
    }
}

pid_of() {  # a daemon's pid from its pid file, when that process is alive and of this cluster
    [ -s "$DIR/$1.pid" ] || return 1
    pid=$(cat "$DIR/$1.pid")
    case "$pid" in ''|*[!0-9]*) return 1 ;; esac
    of_this_folder "$pid" "$1" || return 1
    echo "$pid"
}

daemons() {  # daemons NAME: every NAME of this cluster, its pid file there or not (an
             # earlier up's, the folder removed under it or made again since)
    for pid in $(pgrep -x "$1" || true); do
        of_this_folder "$pid" "$1" && echo "$pid"
    done
    return 0
}

port_holders() {  # port_holders PORT: the pids listening on TCP PORT
    if command -v ss >/dev/null 2>&1; then
        # users:(("slurmd",pid=15549,fd=5)),...: one field a comma
        ss -Hltnp "sport = :$1" | tr ',' '\n' | sed -n 's/^pid=//p' | sort -un
        return 0
    fi
    # No ss (iproute2 is not installed everywhere): the listening sockets' inodes
    # from /proc/net/tcp and tcp6 (port in hex, state 0A), then the processes
    # with a file descriptor on one of them.
    hex=:$(printf '%04X' "$1")
    inodes=$(awk -v port="$hex" 'FNR > 1 && $4 == "0A" && substr($2, length($2) - 4) == port {
        print $10 }' /proc/net/tcp /proc/net/tcp6 2>/dev/null || true)
    for inode in $inodes; do
        find /proc/[0-9]*/fd -lname "socket:\\[$inode\\]" 2>/dev/null | cut -d/ -f3
    done | sort -un
}

command_of() {  # a process's command line, on one line
    tr '\0\n' '  ' <"/proc/$1/cmdline" 2>/dev/null | sed 's/ *$//'
}

# The folder is this script's only when it holds the marker up wrote there:
# down removes nothing else, and up starts nothing in a folder of someone else's.
MARKER=.made-by-slurm-local
ours() {
    [ -f "$DIR/$MARKER" ] && [ ! -L "$DIR" ] && [ ! -L "$DIR/$MARKER" ]
}

refuse() { say "$*"; exit 2; }

claim() {  # up: the folder made here (and marked), or one made here before
    if [ -e "$DIR" ] || [ -L "$DIR" ]; then
        ours || refuse "$DIR was not made by this script (no $MARKER in it): name another folder with BENCH_SLURM_DIR"
    else
        mkdir -p "$DIR"
        echo "slurm-local.sh $$" >"$DIR/$MARKER"
    fi
}

wait_until() {  # wait_until COMMAND...: up to WAIT_S seconds for COMMAND to succeed
    i=0
    while ! "$@" >/dev/null 2>&1; do
        i=$((i + 1))
        [ "$i" -le $((WAIT_S * 5)) ] || return 1
        sleep 0.2
    done
}

write_conf() {
    host=$(hostname -s)
    # The node as slurmd finds it: CPUs, sockets, cores, threads and memory.
    node=$(/usr/sbin/slurmd -C | sed -n 's/^\(NodeName=.*\)/\1/p' | head -n 1)
    [ -n "$node" ] || die "slurmd -C did not describe this machine"
    cat > "$CONF.tmp" <<CONF
# Written by cluster/slurm-local.sh up: a one-node cluster for the benchmark harness.
ClusterName=benchlocal
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=${PORTS% *}
SlurmdPort=${PORTS#* }
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$DIR/munge/munge.socket
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/slurmctld.log
SlurmdLogFile=$DIR/slurmd.log
# No cgroup plugin: the processes of a job are tracked by their parents.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SwitchType=switch/none
MpiDefault=none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
ReturnToService=2
# A finished job stays in squeue's memory for 5 minutes (the default).
MinJobAge=300
$node NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=$PARTITION Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
    mv "$CONF.tmp" "$CONF"
}

ports_free() {  # up: each port free, or held by a daemon of this cluster (stopped next)
    for port in $PORTS; do
        for pid in $(port_holders "$port"); do
            of_this_folder "$pid" slurmctld || of_this_folder "$pid" slurmd ||
                refuse "port $port is held by pid $pid ($(command_of "$pid")), not by a daemon of $DIR: nothing started"
        done
    done
}

stop_leftovers() {  # up: the daemons of this cluster that its pid files do not name
    stopped=""
    for name in slurmd slurmctld munged; do
        known=$(pid_of "$name" || true)
        for pid in $(daemons "$name"); do
            [ "$pid" = "$known" ] && continue
            stop_pid "$pid"
            stopped="$stopped, $name (pid $pid)"
        done
    done
    [ -z "$stopped" ] || say "stopped what an earlier up of $DIR left running: ${stopped#, }"
}

up() {
    install
    if pid_of slurmctld >/dev/null && pid_of slurmd >/dev/null; then
        say "already up ($CONF)"
        return 0
    fi
    ports_free
    claim
    stop_leftovers
    mkdir -p "$DIR/state" "$DIR/spool" "$DIR/munge"
    export SLURM_CONF="$CONF"
    if ! pid_of munged >/dev/null; then
        [ -s "$DIR/munge/munge.key" ] || dd if=/dev/urandom of="$DIR/munge/munge.key" bs=1024 count=1 2>/dev/null
        chmod 0700 "$DIR/munge"
        chmod 0400 "$DIR/munge/munge.key"
        # --force: munged runs as root here, in a folder of its own
        /usr/sbin/munged --force --key-file="$DIR/munge/munge.key" \
            --socket="$DIR/munge/munge.socket" --pid-file="$DIR/munged.pid" \
            --log-file="$DIR/munge/munged.log" --seed-file="$DIR/munge/munged.seed"
        wait_until test -S "$DIR/munge/munge.socket" || die "munged did not start: $DIR/munge/munged.log"
    fi
    write_conf
    pid_of slurmctld >/dev/null || /usr/sbin/slurmctld -c -f "$CONF"
    wait_until scontrol ping || die "slurmctld did not answer within ${WAIT_S} s: $DIR/slurmctld.log"
    pid_of slurmd >/dev/null || /usr/sbin/slurmd -f "$CONF"
    wait_until node_idle || die "the node did not come up within ${WAIT_S} s: $DIR/slurmd.log"
    say "up: partition $PARTITION, $(sinfo --noheader --format '%D node of %c CPUs and %m MB' 2>/dev/null); $(env_line)"
}

gone() {  # exited, or a zombie (no exe) that no one has reaped yet
    ! kill -0 "$1" 2>/dev/null || ! readlink "/proc/$1/exe" >/dev/null 2>&1
}

no_jobs() {
    [ -z "$(squeue --noheader --format=%i 2>/dev/null)" ]
}

node_idle() {
    sinfo --noheader --states=idle --format=%D | grep -q '^1'
}

env_line() {
    echo "export SLURM_CONF=$CONF"
}

stop_pid() {  # TERM, then KILL after WAIT_S seconds; back once it is gone (its port free)
    kill -TERM "$1" 2>/dev/null || return 0
    wait_until gone "$1" && return 0
    kill -KILL "$1" 2>/dev/null || return 0
    wait_until gone "$1" || true
}

stop() {  # stop NAME: every NAME of this cluster
    for pid in $(daemons "$1"); do
        stop_pid "$pid"
    done
}

descendants() {
    for child in $(pgrep -P "$1" || true); do
        echo "$child"
        descendants "$child"
    done
}

job_processes() {  # this cluster's slurmstepd processes (they work in $DIR), with their jobs' processes
    for pid in $(pgrep -x slurmstepd || true); do
        case $(readlink "/proc/$pid/cwd" 2>/dev/null) in
            "$DIR"|"$DIR (deleted)") ;;  # the folder removed under it
            *) continue ;;
        esac
        echo "$pid"
        descendants "$pid"
    done
}

down() {
    if [ -e "$DIR" ] || [ -L "$DIR" ]; then
        ours || refuse "$DIR was not made by this script (no $MARKER in it): nothing stopped or removed"
    elif [ -z "$(daemons slurmctld)$(daemons slurmd)$(daemons munged)$(job_processes)" ]; then
        say "down: no cluster in $DIR"
        return 0
    fi
    # The folder gone, daemons naming it are still this script's (their command
    # line says so): stopped all the same.
    export SLURM_CONF="$CONF"
    if [ -n "$(daemons slurmctld)" ]; then
        scancel --full --quiet --partition="$PARTITION" 2>/dev/null || true
        wait_until no_jobs ||
            say "jobs still listed after ${WAIT_S} s: stopping the daemons anyway"
    fi
    stop slurmd
    stop slurmctld
    for pid in $(job_processes); do
        kill -KILL "$pid" 2>/dev/null || true
    done
    stop munged
    left=""
    for name in slurmctld slurmd munged; do
        [ -z "$(daemons "$name")" ] || left="$left $name"
    done
    [ -z "$(job_processes)" ] || left="$left slurmstepd"
    [ -z "$left" ] || die "still running:$left"
    rm -rf "$DIR"
    say "down: no daemon or job of it left; $DIR removed"
}

case "${1:-}" in
    install) installed || { as_root "$@"; install; } ;;
    up) as_root "$@"; up ;;
    down) as_root "$@"; down ;;
    env) env_line ;;
    status) SLURM_CONF="$CONF" sinfo ;;
    *) echo "usage: cluster/slurm-local.sh install|up|down|env|status" >&2; exit 2 ;;
esac
