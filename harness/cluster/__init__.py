"""The run command on a Slurm cluster: slurm.py submits a build job and an
array of replicates (one whole node each) and merges what they record,
through sbatch.py (Slurm's commands), layout.py (the run directory's files
and the jobs' records), waiting.py (the queue watched) and
replicate_rows.py (each replicate's rows, and rows for what none
recorded); slurm_task.py is what each replicate runs on its node;
replicates.py names and collects them. Wiring like session.py, which it drives: it may import
any stage, and no stage imports it."""
