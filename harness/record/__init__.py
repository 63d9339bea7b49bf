"""The run directory: runs.csv and samples.csv written as rows arrive and
read back checked, in every format version (rundir.py, following
core/schema.py); env.json; the directory's lock, staged writes of the
outputs, results/latest and the list of past runs; run_env.py what env.json
says of one invocation; bisect_folder.py a bisect's own folder; merge.py
joins run directories of several machines or replicates into one. May
import execute and the stages before it (run_env.py reads the toolchains
and the load through it)."""
