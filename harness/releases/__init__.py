"""Which releases of a runtime exist and how one is installed (versions.py:
each registry's list, the download and the folder under .versions/), for
`IMPL@VERSION` and `list --versions`. May import plan, core and processes."""
