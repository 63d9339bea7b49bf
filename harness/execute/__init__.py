"""Running what the plan says, one planned run at a time: the builder
(build lanes, build records, the load generator's install), what is
installed here (toolchains.py: the only place a toolchain's or runtime's
version command runs, before measuring starts), the run loop
(scheduler.py, handed the sequential rules and the record), the executor
(one Planned run → one Row: launch, validate the answer, classify the
status), the load test of the http servers (the load generator), the machine-load probe,
perf stat, and the progress line. Nothing here decides which runs happen or
reads a run back. May import releases, plan, core and processes."""
