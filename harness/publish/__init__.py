"""Publishing: a run's results as the pages of docs/results and README.md's
headline, generated, never typed (readme_tables.py, with the command
`python -m harness.publish.readme_tables`); the articles' claims judged on a
run (claims.py, `python -m harness.publish.claims`); the A/A calibration's
section (calibration.py); and the reading of a published run, the
summary.csv (a typed SummaryRow a line), env.json (core.schema.Env) and
load.csv committed beside a page (published.py), which they all share so
that claims and calibration never import each other or the pages.
The last stage: it may import present, analyse, record and the stages before
them; no stage imports it.
"""
