/*
 * launch: start a program, sample it, and report its own resource usage.
 *
 *   launch FD SAMPLES_FILE INTERVAL_US LIMIT_KB PROGRAM [ARGS...]
 *
 * Why a native launcher: a child forked from the Python harness inherits the
 * harness's resident pages until exec, and the kernel folds that high-water
 * mark into the child's ru_maxrss. Forking from this small process keeps the
 * reading to the program's own memory (plus well under 1 MB). Sampling here
 * too, instead of in a Python thread, keeps the sampler's cost to a few
 * microseconds a sample (benchmarks/sampler_overhead.py).
 *
 * The program runs in its own process group, so that it and its children can
 * be killed together: by this launcher when its RSS passes LIMIT_KB (0 = no
 * limit), or by the harness on a timeout.
 *
 * Every INTERVAL_US it appends "t_ns rss_bytes threads" to SAMPLES_FILE
 * (from /proc/PID/statm and /proc/PID/status). To file descriptor FD (inherited from the harness,
 * closed in the program) it writes "pid PID" right after the fork, then after
 * the program exits one line of "key value" pairs: status (the wait status),
 * maxrss_kb, utime_us, stime_us, wall_ns, oom (1 if killed for the limit),
 * peak_kb and max_threads (sampled), samples, self_cpu_us (this launcher's
 * own CPU time, i.e. the sampler's cost).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long long tv_us(struct timeval tv) {
    return (long long)tv.tv_sec * 1000000LL + tv.tv_usec;
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

int main(int argc, char **argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: launch FD SAMPLES_FILE INTERVAL_US LIMIT_KB PROGRAM [ARGS...]\n");
        return 2;
    }
    int fd = atoi(argv[1]);
    long long interval_ns = atoll(argv[3]) * 1000LL;
    long long limit_bytes = atoll(argv[4]) * 1024LL;
    if (fd < 3 || fcntl(fd, F_SETFD, FD_CLOEXEC) != 0 || interval_ns <= 0) {
        fprintf(stderr, "launch: bad arguments\n");
        return 2;
    }
    FILE *report = fdopen(fd, "w");
    FILE *samples = fopen(argv[2], "we");
    if (report == NULL || samples == NULL) {
        perror("launch: open");
        return 2;
    }

    /* Closed by a successful exec: until then the child is a copy of this
     * launcher, whose pages must not appear in the samples. */
    int exec_pipe[2];
    if (pipe2(exec_pipe, O_CLOEXEC) != 0) {
        perror("launch: pipe");
        return 127;
    }

    long long start = now_ns();
    pid_t pid = fork();
    if (pid < 0) {
        perror("launch: fork");
        return 127;
    }
    if (pid == 0) {
        close(exec_pipe[0]);
        setpgid(0, 0);
        execvp(argv[5], &argv[5]);
        fprintf(stderr, "launch: cannot execute %s: %s\n", argv[5], strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid); /* also here, so the group exists before any kill */
    fprintf(report, "pid %d\n", (int)pid);
    fflush(report);
    close(exec_pipe[1]);
    char ignored;
    while (read(exec_pipe[0], &ignored, 1) < 0 && errno == EINTR)
        ; /* EOF: the program is running (or exec failed and the child is exiting) */
    close(exec_pipe[0]);

    char path[64];
    snprintf(path, sizeof path, "/proc/%d/statm", (int)pid);
    int statm_fd = open(path, O_RDONLY | O_CLOEXEC);
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    int status_fd = open(path, O_RDONLY | O_CLOEXEC);
    int pid_fd = (int)syscall(SYS_pidfd_open, pid, 0); /* readable when the program exits */
    long page = sysconf(_SC_PAGESIZE);
    long long peak = 0, count = 0, next = start;
    long max_threads = 0;
    int oom = 0;

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
        if (limit_bytes > 0 && rss > limit_bytes) {
            oom = 1;
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
            break;
        }
        next += interval_ns;
        long long wait = next - t;
        if (wait < 0) { /* fell behind on a busy machine: no burst to catch up */
            next = t;
            wait = 0;
        }
        struct timespec ts = {wait / 1000000000LL, wait % 1000000000LL};
        if (pid_fd >= 0) {
            struct pollfd pfd = {pid_fd, POLLIN, 0};
            if (ppoll(&pfd, 1, &ts, NULL) > 0)
                break; /* exited: reap it at once, so wall time is exact */
        } else {
            nanosleep(&ts, NULL);
            siginfo_t info;
            memset(&info, 0, sizeof info);
            if (waitid(P_PID, pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid)
                break;
        }
    }

    int status;
    struct rusage ru;
    while (wait4(pid, &status, 0, &ru) < 0) {
        if (errno != EINTR) {
            perror("launch: wait4");
            return 127;
        }
    }
    long long wall = now_ns() - start;
    fclose(samples);
    struct rusage self;
    getrusage(RUSAGE_SELF, &self);
    fprintf(report,
            "status %d maxrss_kb %ld utime_us %lld stime_us %lld wall_ns %lld oom %d "
            "peak_kb %lld max_threads %ld samples %lld self_cpu_us %lld\n",
            status, ru.ru_maxrss, tv_us(ru.ru_utime), tv_us(ru.ru_stime), wall, oom, peak / 1024,
            max_threads, count, tv_us(self.ru_utime) + tv_us(self.ru_stime));
    fclose(report);
    return 0;
}
