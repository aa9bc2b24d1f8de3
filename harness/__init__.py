"""Runs the h5dlio kernel and the reference DLIO Benchmark side by side, under each profile, into one run
directory (runs/<workload>-<time>/) with a manifest. Nothing here imports validate/ or reports/."""
