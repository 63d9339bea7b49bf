"""From the user's options to the list of runs: settings.py checks every
option and reads the suites (suites.toml) into Settings; plan.py turns
Settings and the registry into Planned runs in their interleaved order,
deciding everything about what runs and starting nothing. May import core
and processes."""
