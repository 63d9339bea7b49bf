"""From a run's rows to what they say: analysis.py groups ok rows by
configuration into figures with intervals, ratios against the best and the
floor, outliers and notes; standings.py ranks each set against its leader;
verdicts.py decides them as one family; gate.py decides compare's changes
and its gate, with noise.py's floors from a calibration run; bisection.py
is a bisect's search, each step decided by a ratio interval. Nothing here
writes a file or formats a page. May import record and the stages before
it."""
