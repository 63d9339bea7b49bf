/*
 * launch: start a program and report its own resource usage.
 *
 *   launch FD PROGRAM [ARGS...]
 *
 * Why a native launcher: a child forked from the Python harness inherits the
 * harness's resident pages until exec, and the kernel folds that high-water
 * mark into the child's ru_maxrss. Forking from this small process keeps the
 * reading to the program's own memory (plus well under 1 MB).
 *
 * Writes two lines to file descriptor FD (inherited from the harness, closed
 * in the program): "pid PID" right after the fork, then after the program
 * exits "status WAITSTATUS maxrss_kb MAXRSS utime_us U stime_us S wall_ns W".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: launch FD PROGRAM [ARGS...]\n");
        return 2;
    }
    int fd = atoi(argv[1]);
    if (fd < 3 || fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) {
        fprintf(stderr, "launch: bad report descriptor %s\n", argv[1]);
        return 2;
    }
    FILE *report = fdopen(fd, "w");
    if (report == NULL) {
        perror("launch: fdopen");
        return 2;
    }

    long long start = now_ns();
    pid_t pid = fork();
    if (pid < 0) {
        perror("launch: fork");
        return 127;
    }
    if (pid == 0) {
        execvp(argv[2], &argv[2]);
        fprintf(stderr, "launch: cannot execute %s: %s\n", argv[2], strerror(errno));
        _exit(127);
    }
    fprintf(report, "pid %d\n", (int)pid);
    fflush(report);

    int status;
    struct rusage ru;
    while (wait4(pid, &status, 0, &ru) < 0) {
        if (errno != EINTR) {
            perror("launch: wait4");
            return 127;
        }
    }
    long long wall = now_ns() - start;
    fprintf(report, "status %d maxrss_kb %ld utime_us %lld stime_us %lld wall_ns %lld\n", status,
            ru.ru_maxrss,
            (long long)ru.ru_utime.tv_sec * 1000000LL + ru.ru_utime.tv_usec,
            (long long)ru.ru_stime.tv_sec * 1000000LL + ru.ru_stime.tv_usec, wall);
    fclose(report);
    return 0;
}
