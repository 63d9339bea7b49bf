"""Publishing: a run's results as the pages of docs/results and README.md's
headline, generated, never typed (readme_tables.py, with the command
`python -m harness.publish.readme_tables`); the articles' claims judged on a
run (claims.py, `python -m harness.publish.claims`); and the reading of a
published run, the summary.csv, env.json and load.csv committed beside a
page (published.py), which both share so that neither imports the other.
The last stage: it may import present, analyse, record and the stages before
them; no stage imports it.
"""
