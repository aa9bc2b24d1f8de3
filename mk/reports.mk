# Reports (issue 5): included by the Makefile (-include mk/*.mk).
#   make report RUN=runs/<id>   report.md, report.html (self-contained), report.tex, tables/*.tex (LaTeX) and
#                               figures/ (PNG and PDF) into runs/<id>/report/
#   make paper                  the thesis experiment set (A rt0/rt4, B, C kernel vs DLIO; D-H kernel strong
#                               scaling) at PAPER_SCALE into runs/paper-<time>/, rendered as one report
#   make chromium               headless Chromium (Debian package) for the report's rendering tests
#   make latex                  pdflatex, booktabs, Latin Modern fonts, pdftotext (Debian packages): the LaTeX
#                               output's tests
# Variables: RUN, PAPER_SCALE (tiny|small|full, default tiny), PAPER_RANKS (kernel vs DLIO, default $(RANKS)),
# PAPER_REPEAT (timing launches per side, default 2), PAPER_SCALING_RANKS (default 1,2,4,8),
# PAPER_WORKLOADS, PAPER_SCALING (default thesis-d..h), PAPER_DIR (default runs/paper-<time>).
PAPER_SCALE ?= tiny
PAPER_RANKS ?= $(RANKS)
PAPER_REPEAT ?= 2
PAPER_SCALING_RANKS ?= 1,2,4,8
# A with 4 read threads also runs the Log VFD and DFTracer profiles: the thesis measured its Table 6.1 and its
# DFTracer timelines on configuration A
PAPER_WORKLOADS ?= thesis-a-rt0:timing thesis-a-rt4:timing,logvfd,dftracer thesis-b:timing thesis-c:timing
PAPER_SCALING ?= thesis-d,thesis-e,thesis-f,thesis-g,thesis-h
PAPER_DIR ?= runs/paper-$(shell date +%Y%m%d-%H%M%S)

.PHONY: report paper chromium latex

## re-render a run's report: RUN=runs/<id> (Markdown, HTML, LaTeX, figures)
report: venv
	@[ -n "$(RUN)" ] || { echo "make report: set RUN=runs/<id> (a run directory)" >&2; exit 2; }
	@[ -d "$(RUN)" ] || { echo "make report: RUN=$(RUN): no such directory" >&2; exit 2; }
	@$(VENV)/bin/python -m reports "$(RUN)" || { rc=$$?; echo "make report: RUN=$(RUN) was not rendered (exit $$rc)" >&2; exit $$rc; }

# The thesis experiment set (pipeline/paper.py says each step and the exit status: a kernel-vs-DLIO pair is one pass
# of the pipeline; 1 after the report is rendered if a pass or the scaling failed, naming them; 130 if interrupted).
## the thesis experiment set at PAPER_SCALE (default tiny), rendered as one report
paper: build venv dlio-venv
	@$(VENV)/bin/python -m pipeline paper "$(abspath $(PAPER_DIR))" --scale $(PAPER_SCALE) --ranks $(PAPER_RANKS) \
	  --repeat $(PAPER_REPEAT) --scaling-ranks $(PAPER_SCALING_RANKS) --workloads "$(PAPER_WORKLOADS)" \
	  --scaling $(PAPER_SCALING) --dlio-venv "$$(cat $(or $(DLIO_STAMP),build/.dlio-venv))"

## headless Chromium (Debian) for the report's browser tests
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "chromium: installing the Debian package (headless report tests)"; \
	  SUDO=""; [ "$$(id -u)" -eq 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null; }
	@chromium --version

## pdflatex, booktabs, Latin Modern, pdftotext (Debian) for the LaTeX output's tests
latex:
	@{ command -v pdflatex && kpsewhich booktabs.sty lmodern.sty && command -v pdftotext; } >/dev/null 2>&1 || { \
	  echo "latex: installing the Debian packages (the LaTeX tables' compile test)"; \
	  SUDO=""; [ "$$(id -u)" -eq 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq \
	    --no-install-recommends texlive-latex-base texlive-latex-recommended lmodern poppler-utils >/dev/null; }
	@pdflatex --version | sed -n 1p   # sed reads it all: no SIGPIPE for pipefail to report
