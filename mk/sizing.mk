# Sizing (issue 37; docs/sizing.md): included by the Makefile (-include mk/*.mk).
#   make sizing WORKLOAD=unet3d_b200 DLIO_VENV=<a DLIO 3.x venv> [SCALE=] [RANKS_MAX=64] [RESOLUTION=1] [DATA=<folder
#   on the storage under test>] [LAUNCHER=mpirun|mpiexec|srun] [HOSTS=] [HOST_MEMORY_GB=] [MIN_STEPS=500] [COLD=1]
#   [SIZING_DIR=] [RUNS_DB=<file>]: the largest number of simulated accelerators (kernel ranks) whose AU stays >= the workload's
#   threshold (a checkpoint workload, WORKLOAD=llama3_8b_v3: its checkpoint cycle against ranks instead); the same
#   command again continues an interrupted search. Not a submission.
.PHONY: sizing
SIZING_WORKLOAD = $(if $(filter command line environment,$(origin WORKLOAD)),$(WORKLOAD),unet3d_b200)

## the largest accelerator count whose AU meets the workload's threshold on DATA's storage (WORKLOAD=unet3d_b200, DLIO=<3.x> or DLIO_VENV, RANKS_MAX, RESOLUTION; docs/sizing.md)
sizing: build venv dlio-venv-spec
	@$(VENV)/bin/python -m harness sizing --workload "$(SIZING_WORKLOAD)" $(if $(SCALE),--scale "$(SCALE)") \
	  $(if $(RANKS_MAX),--ranks-max "$(RANKS_MAX)") $(if $(RESOLUTION),--resolution "$(RESOLUTION)") \
	  $(if $(DATA),--data "$(DATA)") $(if $(LAUNCHER),--launcher "$(LAUNCHER)") $(if $(HOSTS),--hosts "$(HOSTS)") \
	  $(if $(HOST_MEMORY_GB),--host-memory-gb "$(HOST_MEMORY_GB)") $(if $(MIN_STEPS),--min-steps "$(MIN_STEPS)") \
	  $(if $(filter 1 yes true,$(COLD)),--cold) \
	  $(if $(SIZING_DIR),--sizing-dir "$(SIZING_DIR)") $(if $(RUNS_DB),--runs-db "$(RUNS_DB)") \
	  --dlio-venv "$$(cat $(DLIO_STAMP))"
