"""Reports: a run directory's verdict and tables -> report.md, a self-contained report.html and figures/*.png.
Reads run-directory files only (no harness/ or validate/ imports; of profiles/ only the registry's declarations,
Profile.describes, metadata_label and report_sections, each section reading the run directory through a
ReportView): any run can be re-rendered.
One flow, down once: rundir (read the directory) -> tables (rows) -> sections, paper (blocks; figures draws) ->
doc (the files), driven by __main__.render; tests/test_sources.py holds the modules to it."""
