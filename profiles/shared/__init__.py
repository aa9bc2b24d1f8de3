"""What several profiles share, none of them a profile (not in the registry): paths.py what a path is in a launch
and the classes of I/O that is not data I/O (every difference outside the data-file reads needs one); files.py the
per-file rows of tables/files-<profile>.json, the <profile>.explained row and the DLIO paper's similarity; rules.py the
reference DLIO's rules as the run records them (what a check may need to know of DLIO's reading)."""
