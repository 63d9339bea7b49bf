"""Starting, containing and stopping processes, for every stage: the
launcher (a small C program that forks, measures and reaps the measured
program in its own process group and cgroup; launch.c), run_contained for
the harness's own helper commands, and the interrupt handling that turns
Ctrl-C into a clean stop. The base of the harness: it may import nothing of
it but the package root (ROOT, the error types)."""
