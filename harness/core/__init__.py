"""The vocabulary every stage shares, declared once as data: the workloads
(workloads.py), their figures (metrics.py) and how each is shown
(presentation.py); the run format's schema (schema.py: the typed Row and
Env, their columns and keys, ConfigKey); the registry of implementations
(impls.toml of each language folder, registry.py) and their names with
variants, releases and local builds (variants.py, local_builds.py); the
statistics on samples (stats.py), the wording of numbers (formatting.py)
and the machine's description (envinfo.py). May import only processes."""
