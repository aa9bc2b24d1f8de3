"""Reports: a run directory's verdict and tables -> report.md, a self-contained report.html and figures/*.png.
Reads run-directory files only (no harness/, profiles/ or validate/ imports): any run can be re-rendered."""
