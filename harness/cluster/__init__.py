"""The run command on a Slurm cluster: slurm.py submits a build job and an
array of replicates (one whole node each) and merges what they record;
slurm_task.py is what each replicate runs on its node; replicates.py names
and collects them. Wiring like session.py, which it drives: it may import
any stage, and no stage imports it."""
