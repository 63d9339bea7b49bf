"""Everything a reader sees, from one analysis: report.md and report.html
(report.py, html_report.py), the plots (plots/), compare's table and the
gate's decision as analyse/gate.py makes it (compare.py), the exports for
other programs (exports.py: summary.csv and results.json; export/: one
exporter per format behind one interface), the runtimes' colours, and
outputs.py, which writes them all together; a bisect's result in words
(bisect_report.py) and `harness list`'s tables (listing.py). May import
analyse and the stages before it."""
