"""Publishing: a run's results as the pages of docs/results, generated,
never typed. command.py is the command (`python -m
harness publish`); readme_tables.py copies a run's files beside its page
and regenerates the pages, their index, README.md's block (readme.py) and
the figures the docs quote (figures.py). A page (page.py) is the run's
report for the repository, drawn by report's code, with the project's
goals (goals.py) and, for a calibration run, the A/A section
(calibration.py); claims.py prints a run's claims table. published.py
reads a published run's files, which they all share. The last stage: it
may import present, analyse, record and the stages before them; no stage
imports it.
"""
