"""From the user's options to the list of runs: settings.py checks every
option and merges a suite (suites.py reads suites.toml, typed) into Settings
(the record env.json keeps, core/schema.py); plan.py turns
Settings and the registry into Planned runs in their interleaved order,
deciding everything about what runs and starting nothing. May import core
and processes."""
