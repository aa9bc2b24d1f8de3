"""The bottom layer: small helpers every other folder may import (harness, profiles, validate, reports, fidelity, store,
bench/perf), and which import nothing of this repository themselves.

Why a folder of its own: data flows one way (harness -> run directory -> validate -> reports) and nothing lower
imports from a folder above it, so a helper that two layers need cannot live in either of them without one of them
importing upwards (reports used to keep its own copy of the harness's atomic writer for that reason). Only
project-independent helpers belong here: writing a file whole (fileio), reading a dotted key of a nested mapping
(mapping), asking a program for one line of output (proc), the run directory's two shared files, the manifest
and tables/ (rundir), and MLPerf Storage's core-config hash and comparability class of a DLIO configuration
(coreconfig)."""
