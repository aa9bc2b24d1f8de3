# The workload matrix (issue 16): included by the Makefile (-include mk/*.mk).
#   make workloads [WORKLOADS=a,b] [SCALE=tiny] [RANKS=2]   `make validate WORKLOAD=<w>` for every DLIO workload in
#       reference-configs/ (not the thesis-* configurations: `make paper`), one at a time, into
#       fidelity/workloads.{json,md}: per workload the verdict and its checks per family, or the kernel's refusal;
#       WORKLOADS= a subset, whose rows replace theirs in the committed matrix (exit 2: not a DLIO workload there);
#       DLIO=<spec> (as make validate): those rows run against that DLIO (MLCommons DLIO 3.x's workloads), and say so
WORKLOADS ?=

.PHONY: workloads

## `make validate` for every DLIO workload in reference-configs/ into fidelity/workloads.{json,md} (DLIO=<spec>: against that DLIO)
workloads: build venv $(if $(filter 2.0.0,$(DLIO)),dlio-venv,dlio-venv-spec)
	@$(VENV)/bin/python -m fidelity.workloads $(if $(WORKLOADS),--workloads "$(WORKLOADS)") --scale $(or $(SCALE),tiny) \
	  --ranks "$(RANKS)" --runs-dir "$(RUNS_DIR)" --dlio-venv "$$(cat $(DLIO_STAMP))"
