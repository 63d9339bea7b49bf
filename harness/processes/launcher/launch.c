/*
 * launch: start a program, sample it, and report its own resource usage.
 *
 *   launch [--cgroup-dir=DIR] [--stderr-keep=BYTES] [--perf=PERF]
 *          REPORT_FD SAMPLES_FD INTERVAL_US LIMIT_KB TIMEOUT_MS STDOUT_CAP PARENT_PID CGROUP CPUS
 *          PROGRAM [ARGS...]
 *
 * --cgroup-dir=DIR: the program joins this cgroup, made (and, whatever
 * happens to this launcher, emptied and removed) by the harness; CGROUP is
 * then ignored. --stderr-keep=BYTES: the program's stderr is a pipe this
 * launcher reads, keeping only its last BYTES in memory (nothing of it on
 * disk), written to this launcher's own stderr once the program has ended.
 * --perf=PERF: `PERF stat` counts the program's software events (and cycles
 * and instructions where the machine exposes them), attached to the forked
 * child before it execs, so perf is never part of the measured process (its
 * memory, its time); see PERF_EVENTS.
 *
 * Why a native launcher: a child forked from the Python harness inherits the
 * harness's resident pages until exec, and the kernel folds that high-water
 * mark into the child's ru_maxrss. Forking from this small process keeps the
 * reading to the program's own memory (plus well under 1 MB). Sampling here
 * too, instead of in a Python thread, keeps the sampler's cost to a few
 * microseconds a sample (benchmarks/sampler_overhead.py).
 *
 * Every INTERVAL_US it appends "t_ns rss_bytes threads" to SAMPLES_FD (from
 * /proc/PID/statm and /proc/PID/status). To REPORT_FD it writes "pid PID"
 * right after the fork, then after the program exits one line of "key value"
 * pairs: status (the wait status), maxrss_kb, utime_us, stime_us, nvcsw, nivcsw,
 * minflt, majflt (the wait4 rusage's context switches and page faults), wall_ns,
 * oom (1 if killed for LIMIT_KB), timeout (1 if killed at TIMEOUT_MS),
 * output_limit (1 if killed because its stdout passed STDOUT_CAP bytes),
 * stopped (the signal that told this launcher to stop: the harness's TERM, or
 * its death), oom_kills (kernel OOM kills during the run, -1 if unknown),
 * strays (processes the program left running after it exited), cgroup (1 if
 * the program ran in its own cgroup), peak_kb and max_threads (sampled),
 * samples, self_cpu_us (this launcher's own CPU time, i.e. the sampler's cost),
 * exec_errno (0, or the errno of a failed exec: the program never ran);
 * with a cgroup, cg_user_us, cg_system_us (its cpu.stat) and cg_pgfault,
 * cg_pgmajfault (its memory.stat), -1 where the file lacks them; with
 * --perf, perf_task_clock_us, perf_context_switches, perf_cpu_migrations,
 * perf_page_faults, perf_cycles, perf_instructions, -1 where not counted.
 * REPORT_FD and SAMPLES_FD are inherited from the harness and closed in the
 * program. 0 for LIMIT_KB, TIMEOUT_MS or STDOUT_CAP means no limit.
 *
 * Nothing is left running. The program runs in its own process group and,
 * when CGROUP is 1 and cgroup v2 is writable, in its own cgroup beside this
 * launcher's; this launcher is also a child subreaper, so that descendants
 * which leave the program's session or process group (setsid, double fork)
 * are re-parented here. When the program is killed (limit, timeout, stop) or
 * exits leaving descendants, the cgroup is killed (cgroup.kill) and the whole
 * tree of this launcher's descendants is killed and reaped. The harness's
 * death reaches this launcher as SIGTERM (PR_SET_PDEATHSIG, and getppid() is
 * checked after setting it and at every sample), and the program gets SIGKILL
 * if this launcher itself dies. None of this touches the program while it
 * runs: no extra thread, memory or work in it; the tree scan happens only
 * after it has been killed or has exited, outside the measured wall time.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop_signal = 0;
static pid_t parent_pid;
static char cg_dir[PATH_MAX]; /* the program's cgroup, "" if none */
static int cg_external = 0;    /* made by the harness (--cgroup-dir) */

/* --stderr-keep: the last `ring_size` bytes of the program's stderr. */
static char *ring;
static size_t ring_size, ring_len, ring_start;

static void ring_add(const char *buf, size_t n) {
    if (n >= ring_size) { /* only its end fits */
        memcpy(ring, buf + n - ring_size, ring_size);
        ring_start = 0;
        ring_len = ring_size;
        return;
    }
    for (size_t i = 0; i < n;) {
        size_t at = (ring_start + ring_len) % ring_size;
        size_t room = ring_size - at < n - i ? ring_size - at : n - i;
        memcpy(ring + at, buf + i, room);
        i += room;
        ring_len += room;
        if (ring_len > ring_size) {
            ring_start = (ring_start + ring_len - ring_size) % ring_size;
            ring_len = ring_size;
        }
    }
}

/* Read what the stderr pipe holds now (non-blocking); -1 at EOF. */
static int drain_stderr(int fd) {
    char buf[65536];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n > 0) {
            ring_add(buf, (size_t)n);
            continue;
        }
        if (n == 0)
            return -1;
        return errno == EINTR ? 0 : (errno == EAGAIN || errno == EWOULDBLOCK) ? 0 : -1;
    }
}

static void write_all(int fd, const char *buf, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, buf, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        buf += w;
        n -= (size_t)w;
    }
}

static void on_stop(int sig) {
    stop_signal = sig;
}

/* A stop was asked for: by a signal, or the harness is gone (its death
 * signal may have come before PR_SET_PDEATHSIG was set). */
static int stop_requested(void) {
    if (stop_signal == 0 && getppid() != parent_pid)
        stop_signal = SIGTERM;
    return stop_signal != 0;
}

static long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long long tv_us(struct timeval tv) {
    return (long long)tv.tv_sec * 1000000LL + tv.tv_usec;
}

static void sleep_ns(long long ns) {
    struct timespec ts = {ns / 1000000000LL, ns % 1000000000LL};
    nanosleep(&ts, NULL);
}

static ssize_t read_file(const char *path, char *buf, size_t size) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, size - 1);
    close(fd);
    if (n < 0)
        return -1;
    buf[n] = '\0';
    return n;
}

static int write_file(const char *path, const char *text) {
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = write(fd, text, strlen(text));
    close(fd);
    return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* The value after "\nKEY " (or at the start) in a "key value" file; -1 if absent. */
static long long keyed_value(const char *path, const char *key) {
    char buf[16384];
    if (read_file(path, buf, sizeof buf) < 0)
        return -1;
    size_t len = strlen(key);
    for (char *p = buf; p != NULL && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        if (strncmp(p, key, len) == 0 && p[len] == ' ')
            return atoll(p + len + 1);
    }
    return -1;
}

/*
 * The kernel's count of OOM kills: in the program's cgroup when it has the
 * memory controller (exactly the program's), else machine-wide.
 */
static long long oom_kill_count(void) {
    if (cg_dir[0]) {
        char path[PATH_MAX + 32];
        snprintf(path, sizeof path, "%s/memory.events", cg_dir);
        long long n = keyed_value(path, "oom_kill");
        if (n >= 0)
            return n;
    }
    return keyed_value("/proc/vmstat", "oom_kill");
}

/*
 * RSS in bytes (from /proc/PID/statm) and thread count (from the "Threads:"
 * line of /proc/PID/status); -1 once the program is gone or a zombie. Both
 * files cost the same whatever the thread count, unlike /proc/PID/stat,
 * which sums CPU times over every thread: with 10,000 threads reading it
 * every 10 ms took 12% of a core.
 */
static int read_proc(int statm_fd, int status_fd, long page, long long *rss, long *threads) {
    char buf[4096];
    ssize_t n = pread(statm_fd, buf, sizeof buf - 1, 0);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    long long size, resident;
    if (sscanf(buf, "%lld %lld", &size, &resident) != 2)
        return -1;
    *rss = resident * page;
    n = pread(status_fd, buf, sizeof buf - 1, 0);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    char *state = strstr(buf, "\nState:\t");
    if (state != NULL && state[8] == 'Z')
        return -1;
    char *line = strstr(buf, "\nThreads:\t");
    *threads = line ? atol(line + 10) : 0;
    return 0;
}

/* ---- the program's cgroup (v2) ---- */

/* Directory of this process's cgroup v2, or -1 (no cgroup2 mount, hybrid
 * set-up without our path, a path the mount does not show). */
static int own_cgroup(char *out, size_t size) {
    char line[4096], root[PATH_MAX] = "", mnt[PATH_MAX] = "", rel[PATH_MAX] = "";
    FILE *f = fopen("/proc/self/mountinfo", "re");
    if (f == NULL)
        return -1;
    while (fgets(line, sizeof line, f)) {
        char *sep = strstr(line, " - ");
        if (sep == NULL || strncmp(sep + 3, "cgroup2 ", 8) != 0 || strchr(line, '\\'))
            continue; /* (a '\' is an escaped space or such in a path: not worth decoding) */
        if (sscanf(line, "%*s %*s %*s %4095s %4095s", root, mnt) == 2)
            break;
        mnt[0] = '\0';
    }
    fclose(f);
    f = fopen("/proc/self/cgroup", "re");
    if (f == NULL || mnt[0] == '\0') {
        if (f)
            fclose(f);
        return -1;
    }
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "0::", 3) == 0) {
            line[strcspn(line, "\n")] = '\0';
            snprintf(rel, sizeof rel, "%s", line + 3);
            break;
        }
    }
    fclose(f);
    if (rel[0] != '/' || strstr(rel, " (deleted)"))
        return -1;
    const char *tail = rel;
    if (strcmp(root, "/") != 0) {
        size_t n = strlen(root);
        if (strncmp(rel, root, n) != 0 || (rel[n] != '/' && rel[n] != '\0'))
            return -1;
        tail = rel + n;
    }
    if (strcmp(tail, "/") == 0)
        tail = "";
    return snprintf(out, size, "%s%s", mnt, tail) < (int)size ? 0 : -1;
}

/* Remove the empty cgroups of launchers that died without cleaning up
 * (killed with SIGKILL); a populated one is left alone (rmdir fails). */
static void remove_stale_cgroups(const char *parent) {
    DIR *d = opendir(parent);
    if (d == NULL)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "harness-launch.", 15) != 0)
            continue;
        pid_t owner = (pid_t)atol(e->d_name + 15);
        if (owner > 0 && owner != getpid() && kill(owner, 0) != 0 && errno == ESRCH) {
            char path[PATH_MAX + 300];
            snprintf(path, sizeof path, "%s/%s", parent, e->d_name);
            rmdir(path);
        }
    }
    closedir(d);
}

/* Create the program's cgroup beside... below this launcher's own; returns an
 * open cgroup.procs to join it, or -1 (then the process tree is tracked). */
static int create_cgroup(void) {
    char own[PATH_MAX];
    if (own_cgroup(own, sizeof own) != 0)
        return -1;
    remove_stale_cgroups(own);
    if (snprintf(cg_dir, sizeof cg_dir, "%s/harness-launch.%d", own, (int)getpid()) >=
            (int)sizeof cg_dir || mkdir(cg_dir, 0755) != 0) {
        cg_dir[0] = '\0';
        return -1;
    }
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/cgroup.procs", cg_dir);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
        rmdir(cg_dir);
        cg_dir[0] = '\0';
    }
    return fd;
}

static int cgroup_populated(void) {
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/cgroup.events", cg_dir);
    return keyed_value(path, "populated") == 1;
}

/* Processes in the cgroup, each sent SIGKILL (cgroup.kill does it at once
 * where the kernel has it, 5.14+; else one by one). Returns how many. */
static int kill_cgroup(void) {
    char path[PATH_MAX + 32], buf[65536];
    snprintf(path, sizeof path, "%s/cgroup.procs", cg_dir);
    int count = 0;
    if (read_file(path, buf, sizeof buf) > 0)
        for (char *p = buf; *p; p++)
            count += *p == '\n';
    snprintf(path, sizeof path, "%s/cgroup.kill", cg_dir);
    if (count > 0 && write_file(path, "1") != 0) {
        snprintf(path, sizeof path, "%s/cgroup.procs", cg_dir);
        if (read_file(path, buf, sizeof buf) > 0)
            for (char *p = buf; *p;) {
                kill((pid_t)atol(p), SIGKILL);
                p = strchr(p, '\n');
                if (p == NULL)
                    break;
                p++;
            }
    }
    return count;
}

/* ---- perf stat, attached before exec ---- */

/* perf's event names, in the order of the report keys below. */
#define PERF_EVENTS "task-clock,context-switches,cpu-migrations,page-faults,cycles,instructions"
static const char *perf_keys[] = {"perf_task_clock_us", "perf_context_switches",
                                  "perf_cpu_migrations", "perf_page_faults", "perf_cycles",
                                  "perf_instructions"};
static const char *perf_events[] = {"task-clock", "context-switches", "cpu-migrations",
                                    "page-faults", "cycles", "instructions"};
#define PERF_COUNT 6

static pid_t perf_pid = 0;
static int perf_log = -1; /* a memfd holding perf's CSV output and messages */

/*
 * Start `perf stat -p PID` with its events disabled (-D -1), enable them
 * through its control pipe and wait for its ack (at most 10 s): from then
 * on everything the program does after its exec is counted, its threads
 * and children included (perf's counters are inherited). Returns 0 when
 * perf counts, -1 otherwise (the run goes on without counts).
 */
static int start_perf(const char *perf, pid_t pid) {
    int ctl[2], ack[2];
    perf_log = (int)syscall(SYS_memfd_create, "perf", 1 /* MFD_CLOEXEC */);
    if (perf_log < 0 || pipe2(ctl, O_CLOEXEC) != 0)
        return -1;
    if (pipe2(ack, O_CLOEXEC) != 0) {
        close(ctl[0]);
        close(ctl[1]);
        return -1;
    }
    perf_pid = fork();
    if (perf_pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        signal(SIGPIPE, SIG_DFL);
        int null = open("/dev/null", O_RDWR);
        if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(null, STDOUT_FILENO) < 0 ||
            dup2(perf_log, STDERR_FILENO) < 0)
            _exit(127);
        fcntl(ctl[0], F_SETFD, 0);
        fcntl(ack[1], F_SETFD, 0);
        char control[64], target[32];
        snprintf(control, sizeof control, "--control=fd:%d,%d", ctl[0], ack[1]);
        snprintf(target, sizeof target, "%d", (int)pid);
        execl(perf, perf, "stat", "-x,", "--log-fd", "2", "-e", PERF_EVENTS, "-D", "-1", control,
              "-p", target, (char *)NULL);
        _exit(127);
    }
    close(ctl[0]);
    close(ack[1]);
    int ok = -1;
    if (perf_pid > 0 && write(ctl[1], "enable\n", 7) == 7) {
        struct pollfd pfd = {ack[0], POLLIN, 0};
        char buf[16];
        if (poll(&pfd, 1, 10000) == 1 && read(ack[0], buf, sizeof buf) > 0 &&
            strncmp(buf, "ack", 3) == 0)
            ok = 0;
    }
    close(ctl[1]);
    close(ack[0]);
    if (ok != 0 && perf_pid > 0) {
        kill(perf_pid, SIGKILL);
        waitpid(perf_pid, NULL, 0);
        perf_pid = 0;
    }
    return ok;
}

/* After the program has been reaped: perf prints its counts on SIGINT
 * (a counter keeps the count of its exited task); at most 5 s. */
static void stop_perf(long long counts[PERF_COUNT]) {
    for (int i = 0; i < PERF_COUNT; i++)
        counts[i] = -1;
    if (perf_pid <= 0)
        return;
    kill(perf_pid, SIGINT);
    long long deadline = now_ns() + 5000000000LL;
    int status;
    while (waitpid(perf_pid, &status, WNOHANG) == 0) {
        if (now_ns() > deadline) {
            kill(perf_pid, SIGKILL);
            waitpid(perf_pid, &status, 0);
            perf_pid = 0;
            return;
        }
        sleep_ns(1000000);
    }
    perf_pid = 0;
    char buf[8192];
    ssize_t n = pread(perf_log, buf, sizeof buf - 1, 0);
    if (n <= 0)
        return;
    buf[n] = '\0';
    /* CSV lines "value,unit,event,...": "<not supported>" or "<not counted>"
     * in place of a value leave -1. */
    for (char *line = buf; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
        char *c1 = strchr(line, ',');
        char *c2 = c1 ? strchr(c1 + 1, ',') : NULL;
        if (c2 == NULL || line[0] < '0' || line[0] > '9')
            continue;
        for (int i = 0; i < PERF_COUNT; i++) {
            size_t len = strlen(perf_events[i]);
            if (strncmp(c2 + 1, perf_events[i], len) == 0 && (c2[1 + len] == ',' || c2[1 + len] == ':')) {
                double v = strtod(line, NULL);
                counts[i] = i == 0 ? (long long)(v * 1000.0 + 0.5) : (long long)(v + 0.5); /* task-clock: ms */
            }
        }
    }
}

/* The program's cgroup's own accounting, read before it is removed. */
static void cgroup_counts(long long out[4]) {
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/cpu.stat", cg_dir);
    out[0] = keyed_value(path, "user_usec");
    out[1] = keyed_value(path, "system_usec");
    snprintf(path, sizeof path, "%s/memory.stat", cg_dir);
    out[2] = keyed_value(path, "pgfault");
    out[3] = keyed_value(path, "pgmajfault");
}

/* ---- the process tree ---- */

struct proc_entry {
    pid_t pid, ppid;
    char state;
};

static int by_pid(const void *a, const void *b) {
    pid_t x = ((const struct proc_entry *)a)->pid, y = ((const struct proc_entry *)b)->pid;
    return (x > y) - (x < y);
}

/*
 * Every descendant of this launcher, from the parent links in /proc (a
 * subreaper's orphans are re-parented to it, so none falls out of the
 * tree), each sent SIGKILL unless `dry`. Returns how many are alive (not
 * zombies), or 0 if /proc cannot be read.
 */
static int kill_descendants(pid_t skip, int dry) {
    DIR *d = opendir("/proc");
    if (d == NULL)
        return 0;
    size_t cap = 1024, n = 0;
    struct proc_entry *all = malloc(cap * sizeof *all);
    struct dirent *e;
    char path[300], buf[1024];
    while (all != NULL && (e = readdir(d)) != NULL) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        if (read_file(path, buf, sizeof buf) <= 0)
            continue;
        char *close_paren = strrchr(buf, ')'); /* the command name may hold ')' */
        struct proc_entry pe = {(pid_t)atol(e->d_name), 0, 0};
        int ppid;
        if (close_paren == NULL || sscanf(close_paren + 2, "%c %d", &pe.state, &ppid) != 2)
            continue;
        pe.ppid = (pid_t)ppid;
        if (n == cap) {
            struct proc_entry *more = realloc(all, 2 * cap * sizeof *all);
            if (more == NULL)
                break;
            all = more;
            cap *= 2;
        }
        all[n++] = pe;
    }
    closedir(d);
    if (all == NULL)
        return 0;
    /* Sorted by pid, each entry's ancestry is followed once (memoised). */
    qsort(all, n, sizeof *all, by_pid);
    char *in = calloc(n ? n : 1, 1); /* 0 unknown, 1 descendant, 2 not */
    pid_t self = getpid();
    for (size_t i = 0; in != NULL && i < n; i++) {
        size_t chain[64], depth = 0, k = i;
        char verdict = 2;
        for (;;) {
            if (in[k]) {
                verdict = in[k];
                break;
            }
            if (all[k].ppid == self) {
                verdict = 1;
                chain[depth < 64 ? depth++ : 63] = k;
                break;
            }
            chain[depth < 64 ? depth++ : 63] = k;
            struct proc_entry key = {all[k].ppid, 0, 0};
            struct proc_entry *up = all[k].ppid > 0 ? bsearch(&key, all, n, sizeof *all, by_pid) : NULL;
            if (up == NULL || depth >= 64)
                break; /* reached init, or a parent gone since: not ours */
            k = (size_t)(up - all);
        }
        for (size_t j = 0; j < depth; j++)
            in[chain[j]] = verdict;
    }
    int alive = 0;
    for (size_t i = 0; in != NULL && i < n; i++) {
        if (in[i] != 1 || all[i].state == 'Z' || all[i].state == 'X')
            continue;
        if (all[i].pid != skip)
            alive++;
        if (!dry)
            kill(all[i].pid, SIGKILL);
    }
    free(in);
    free(all);
    return alive;
}

/* Reap whatever has exited among our children, never the program itself
 * before its wait4 (program_reaped says it has been). */
static void reap_others(pid_t program, int program_reaped) {
    for (;;) {
        siginfo_t info;
        memset(&info, 0, sizeof info);
        if (waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == 0)
            return;
        if (info.si_pid == program && !program_reaped)
            return;
        waitpid(info.si_pid, NULL, WNOHANG);
    }
}

/* Kill the program's group, cgroup and every descendant, while the program
 * itself stays unreaped (its wait4 gives the rusage). */
static void kill_everything(pid_t program) {
    kill(-program, SIGKILL);
    kill(program, SIGKILL);
    if (cg_dir[0])
        kill_cgroup();
    kill_descendants(program, 0);
}

/*
 * After the program has been reaped: kill and reap everything it left, wait
 * until its cgroup is empty and remove it. Returns how many processes were
 * still running when this started.
 */
static int clean_up(pid_t program) {
    int strays = kill_descendants(0, 1);
    if (cg_dir[0] && strays == 0 && cgroup_populated())
        strays = 1; /* something in the cgroup but outside our tree */
    long long deadline = now_ns() + 5000000000LL;
    for (;;) {
        int left = 0;
        if (cg_dir[0] && cgroup_populated()) {
            kill_cgroup();
            left = 1;
        }
        left += kill_descendants(0, 0);
        reap_others(program, 1);
        if (left == 0 || now_ns() > deadline)
            break;
        sleep_ns(1000000);
    }
    reap_others(program, 1);
    if (cg_dir[0]) { /* (the harness removes it too, if this launcher cannot) */
        for (int i = 0; i < 100 && rmdir(cg_dir) != 0 && errno == EBUSY; i++)
            sleep_ns(10000000);
    }
    return strays;
}

/* Keep the first `count` CPUs of this process's allowed set (--cpus K):
 * pinned here, between fork and exec, so the measured process is the program
 * itself from its first instruction and the runtime sizes its pools from
 * the mask it starts with. */
static int pin_first_cpus(int count) {
    cpu_set_t allowed, pinned;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
        return -1;
    CPU_ZERO(&pinned);
    for (int cpu = 0, kept = 0; cpu < CPU_SETSIZE && kept < count; cpu++) {
        if (CPU_ISSET(cpu, &allowed)) {
            CPU_SET(cpu, &pinned);
            kept++;
        }
    }
    if (CPU_COUNT(&pinned) < count) {
        errno = EINVAL;
        return -1;
    }
    return sched_setaffinity(0, sizeof pinned, &pinned);
}

int main(int argc, char **argv) {
    const char *given_cgroup = NULL;
    const char *perf = NULL;
    long long stderr_keep = 0;
    while (argc > 1 && strncmp(argv[1], "--", 2) == 0) {
        if (strncmp(argv[1], "--cgroup-dir=", 13) == 0)
            given_cgroup = argv[1] + 13;
        else if (strncmp(argv[1], "--stderr-keep=", 14) == 0)
            stderr_keep = atoll(argv[1] + 14);
        else if (strncmp(argv[1], "--perf=", 7) == 0)
            perf = argv[1] + 7;
        else {
            fprintf(stderr, "launch: unknown option %s\n", argv[1]);
            return 2;
        }
        argv++;
        argc--;
    }
    if (argc < 11) {
        fprintf(stderr, "usage: launch [--cgroup-dir=DIR] [--stderr-keep=BYTES] [--perf=PERF] REPORT_FD SAMPLES_FD INTERVAL_US LIMIT_KB TIMEOUT_MS "
                        "STDOUT_CAP PARENT_PID CGROUP CPUS PROGRAM [ARGS...]\n");
        return 2;
    }
    int fd = atoi(argv[1]);
    int samples_fd = atoi(argv[2]);
    long long interval_ns = atoll(argv[3]) * 1000LL;
    long long limit_bytes = atoll(argv[4]) * 1024LL;
    long long timeout_ns = atoll(argv[5]) * 1000000LL;
    long long stdout_cap = atoll(argv[6]);
    parent_pid = (pid_t)atol(argv[7]);
    int want_cgroup = atoi(argv[8]);
    int cpus = atoi(argv[9]); /* 0: not pinned */
    char **program_argv = &argv[10];
    if (fd < 3 || samples_fd < 3 || fd == samples_fd || fcntl(fd, F_SETFD, FD_CLOEXEC) != 0 ||
        fcntl(samples_fd, F_SETFD, FD_CLOEXEC) != 0 || interval_ns <= 0 || parent_pid <= 0) {
        fprintf(stderr, "launch: bad arguments\n");
        return 2;
    }

    /* Stop on TERM, HUP or INT, and on the harness's death (as TERM). The
     * handlers only set a flag; the loops below look at it. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN); /* the harness may be gone when the report is written */
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (stop_requested())
        return 3; /* the harness died before the death signal was set: start nothing */
    prctl(PR_SET_CHILD_SUBREAPER, 1);

    FILE *report = fdopen(fd, "w");
    FILE *samples = fdopen(samples_fd, "w");
    if (report == NULL || samples == NULL) {
        perror("launch: open");
        return 2;
    }

    /* Closed by a successful exec: until then the child is a copy of this
     * launcher, whose pages must not appear in the samples. The child writes
     * 'c' into it first if it could not join its cgroup. */
    int exec_pipe[2];
    if (pipe2(exec_pipe, O_CLOEXEC) != 0) {
        perror("launch: pipe");
        return 127;
    }
    int procs_fd = -1;
    if (given_cgroup != NULL && given_cgroup[0]) {
        char path[PATH_MAX + 32];
        if (snprintf(cg_dir, sizeof cg_dir, "%s", given_cgroup) < (int)sizeof cg_dir) {
            cg_external = 1;
            snprintf(path, sizeof path, "%s/cgroup.procs", cg_dir);
            procs_fd = open(path, O_WRONLY | O_CLOEXEC);
        }
        if (procs_fd < 0)
            cg_dir[0] = '\0';
    } else if (want_cgroup && given_cgroup == NULL) {
        procs_fd = create_cgroup();
    }
    /* --stderr-keep: the program's stderr is a pipe read here. */
    int err_pipe[2] = {-1, -1};
    if (stderr_keep > 0) {
        ring_size = (size_t)stderr_keep;
        ring = malloc(ring_size);
        if (ring == NULL || pipe2(err_pipe, O_CLOEXEC) != 0) {
            perror("launch: stderr pipe");
            return 127;
        }
        fcntl(err_pipe[0], F_SETFL, O_NONBLOCK);
    }
    /* --perf: the child waits on this until perf counts it. */
    int go_pipe[2] = {-1, -1};
    if (perf != NULL && pipe2(go_pipe, O_CLOEXEC) != 0) {
        perror("launch: pipe");
        return 127;
    }
    long long oom_kills_before = oom_kill_count();

    long long start = now_ns();
    pid_t self = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        perror("launch: fork");
        return 127;
    }
    if (pid == 0) {
        close(exec_pipe[0]);
        signal(SIGTERM, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        signal(SIGPIPE, SIG_DFL);
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* if this launcher is killed outright */
        if (getppid() != self)
            _exit(127);
        if (err_pipe[1] >= 0 && dup2(err_pipe[1], STDERR_FILENO) < 0)
            _exit(127);
        if (procs_fd >= 0) {
            char me[32];
            int len = snprintf(me, sizeof me, "%d", (int)getpid());
            if (write(procs_fd, me, len) != len && write(exec_pipe[1], "c", 1) < 0)
                _exit(127);
        }
        setpgid(0, 0);
        if (cpus > 0 && pin_first_cpus(cpus) != 0) {
            fprintf(stderr, "launch: cannot pin to %d CPUs: %s\n", cpus, strerror(errno));
            _exit(127);
        }
        if (go_pipe[0] >= 0) {
            char go;
            close(go_pipe[1]);
            while (read(go_pipe[0], &go, 1) < 0 && errno == EINTR)
                ;
        }
        execvp(program_argv[0], program_argv);
        int exec_errno = errno;
        char msg[1 + sizeof exec_errno];
        msg[0] = 'e';
        memcpy(msg + 1, &exec_errno, sizeof exec_errno);
        ssize_t told = write(exec_pipe[1], msg, sizeof msg);
        (void)told;
        fprintf(stderr, "launch: cannot execute %s: %s\n", program_argv[0], strerror(exec_errno));
        _exit(127);
    }
    if (err_pipe[1] >= 0)
        close(err_pipe[1]);
    int err_fd = err_pipe[0];
    setpgid(pid, pid); /* also here, so the group exists before any kill */
    fprintf(report, "pid %d\n", (int)pid);
    fflush(report);
    close(exec_pipe[1]);
    int perf_counting = 0;
    if (go_pipe[0] >= 0) { /* the clock starts when perf counts, not while it starts */
        close(go_pipe[0]);
        perf_counting = start_perf(perf, pid) == 0;
        start = now_ns();
        close(go_pipe[1]); /* EOF: go */
    }
    char byte;
    ssize_t got;
    int exec_errno = 0;
    while ((got = read(exec_pipe[0], &byte, 1)) != 0) {
        if (got == 1 && byte == 'c' && cg_dir[0]) { /* could not join: track the tree only */
            if (!cg_external)
                rmdir(cg_dir);
            cg_dir[0] = '\0';
        } else if (got == 1 && byte == 'e') {
            if (read(exec_pipe[0], &exec_errno, sizeof exec_errno) != sizeof exec_errno)
                exec_errno = ENOEXEC;
        } else if (got < 0 && errno != EINTR) {
            break;
        }
    } /* EOF: the program is running (or exec failed and the child is exiting) */
    close(exec_pipe[0]);
    if (procs_fd >= 0)
        close(procs_fd);

    char path[64];
    snprintf(path, sizeof path, "/proc/%d/statm", (int)pid);
    int statm_fd = open(path, O_RDONLY | O_CLOEXEC);
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    int status_fd = open(path, O_RDONLY | O_CLOEXEC);
    int pid_fd = (int)syscall(SYS_pidfd_open, pid, 0); /* readable when the program exits */
    long page = sysconf(_SC_PAGESIZE);
    long long peak = 0, count = 0, next = start;
    long long deadline = timeout_ns > 0 ? start + timeout_ns : 0;
    long max_threads = 0;
    int oom = 0, timed_out = 0, output_limit = 0, killed = 0;
    struct stat st;

    while (statm_fd >= 0 && status_fd >= 0) {
        long long rss = 0;
        long threads = 0;
        if (read_proc(statm_fd, status_fd, page, &rss, &threads) != 0)
            break;
        long long t = now_ns();
        if (rss > 0) { /* 0 between fork and exec, or while tearing down */
            fprintf(samples, "%lld %lld %ld\n", t - start, rss, threads);
            count++;
            if (rss > peak)
                peak = rss;
            if (threads > max_threads)
                max_threads = threads;
        }
        if (limit_bytes > 0 && rss > limit_bytes)
            oom = killed = 1;
        else if (stdout_cap > 0 && fstat(STDOUT_FILENO, &st) == 0 && S_ISREG(st.st_mode) &&
                 st.st_size > stdout_cap)
            output_limit = killed = 1;
        else if (deadline > 0 && t >= deadline)
            timed_out = killed = 1;
        else if (stop_requested())
            killed = 1;
        if (killed)
            break;
        next += interval_ns;
        long long wait = next - t;
        if (wait < 0) { /* fell behind on a busy machine: no burst to catch up */
            next = t;
            wait = 0;
        }
        if (deadline > 0 && deadline - t < wait)
            wait = deadline - t;
        struct timespec ts = {wait / 1000000000LL, wait % 1000000000LL};
        struct pollfd pfd[2] = {{pid_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
        if (err_fd >= 0) { /* wait for the program's exit, reading its stderr meanwhile */
            long long until = now_ns() + wait;
            int exited = 0;
            for (;;) {
                pfd[0].revents = pfd[1].revents = 0;
                int ready = ppoll(pfd, 2, &ts, NULL);
                if (ready > 0 && pfd[1].revents && drain_stderr(err_fd) < 0) {
                    close(err_fd); /* EOF: every writer is gone */
                    err_fd = pfd[1].fd = -1;
                }
                if (ready > 0 && pid_fd >= 0 && pfd[0].revents) {
                    exited = 1;
                    break;
                }
                if (stop_requested())
                    break;
                long long left = until - now_ns();
                if (left <= 0)
                    break;
                ts.tv_sec = left / 1000000000LL;
                ts.tv_nsec = left % 1000000000LL;
            }
            if (exited)
                break;
            if (pid_fd < 0) {
                siginfo_t info;
                memset(&info, 0, sizeof info);
                if (waitid(P_PID, pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid)
                    break;
            }
        } else if (pid_fd >= 0) {
            if (ppoll(pfd, 1, &ts, NULL) > 0)
                break; /* exited: reap it at once, so wall time is exact */
        } else {
            nanosleep(&ts, NULL);
            siginfo_t info;
            memset(&info, 0, sizeof info);
            if (waitid(P_PID, pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid)
                break;
        }
    }
    if (killed || stop_requested())
        kill_everything(pid);

    int status;
    struct rusage ru;
    while (wait4(pid, &status, 0, &ru) < 0) {
        if (errno != EINTR) {
            perror("launch: wait4");
            kill_everything(pid);
            clean_up(pid);
            return 127;
        }
        if (stop_requested())
            kill_everything(pid);
    }
    long long wall = now_ns() - start;
    struct rusage self_ru;
    getrusage(RUSAGE_SELF, &self_ru);
    long long oom_kills_after = oom_kill_count();
    long long oom_kills = oom_kills_before >= 0 && oom_kills_after >= 0
                              ? oom_kills_after - oom_kills_before : -1;
    int in_cgroup = cg_dir[0] != '\0';
    long long cg[4] = {-1, -1, -1, -1};
    if (in_cgroup)
        cgroup_counts(cg);
    long long perf_counts[PERF_COUNT];
    stop_perf(perf_counts); /* before clean_up, which would take perf for a stray */
    int strays = clean_up(pid);
    if (err_fd >= 0) { /* what is left in the pipe: its writers are all dead now */
        drain_stderr(err_fd);
        close(err_fd);
    }
    if (ring_len > 0) {
        write_all(STDERR_FILENO, ring + ring_start, ring_start + ring_len > ring_size
                                                        ? ring_size - ring_start : ring_len);
        if (ring_start + ring_len > ring_size)
            write_all(STDERR_FILENO, ring, ring_start + ring_len - ring_size);
    }
    fclose(samples);
    fprintf(report,
            "status %d maxrss_kb %ld utime_us %lld stime_us %lld nvcsw %ld nivcsw %ld "
            "minflt %ld majflt %ld wall_ns %lld oom %d "
            "timeout %d output_limit %d stopped %d oom_kills %lld strays %d cgroup %d "
            "peak_kb %lld max_threads %ld samples %lld self_cpu_us %lld exec_errno %d\n",
            status, ru.ru_maxrss, tv_us(ru.ru_utime), tv_us(ru.ru_stime), ru.ru_nvcsw,
            ru.ru_nivcsw, ru.ru_minflt, ru.ru_majflt, wall, oom, timed_out,
            output_limit, (int)stop_signal, oom_kills, killed ? 0 : strays, in_cgroup,
            peak / 1024, max_threads, count,
            tv_us(self_ru.ru_utime) + tv_us(self_ru.ru_stime), exec_errno);
    if (in_cgroup)
        fprintf(report, "cg_user_us %lld cg_system_us %lld cg_pgfault %lld cg_pgmajfault %lld\n",
                cg[0], cg[1], cg[2], cg[3]);
    if (perf != NULL) {
        for (int i = 0; i < PERF_COUNT; i++)
            fprintf(report, "%s %lld%s", perf_keys[i], perf_counting ? perf_counts[i] : -1LL,
                    i + 1 < PERF_COUNT ? " " : "\n");
    }
    fclose(report);
    return 0;
}
