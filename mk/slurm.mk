# Slurm (issue 15): included by the Makefile (-include mk/*.mk).
#   make slurm    Debian's slurm-wlm and munge, for the Slurm tests (tests/test_slurm.py starts munged, slurmctld and
#                 slurmd by hand in a temporary folder: no systemd needed). A dependency of test-py; when the install
#                 is impossible it says why in build/slurm-install.log and the Slurm tests skip with that reason.
.PHONY: slurm

## Debian's slurm-wlm and munge for the Slurm tests (a one-node cluster started by the tests)
slurm:
	@mkdir -p build; rm -f build/slurm-install.log; \
	if command -v slurmctld >/dev/null 2>&1 && command -v slurmd >/dev/null 2>&1 && command -v srun >/dev/null 2>&1 \
	  && command -v munged >/dev/null 2>&1; then slurmd -V; exit 0; fi; \
	echo "slurm: installing the Debian packages slurm-wlm and munge (Slurm tests)"; \
	SUDO=""; [ "$$(id -u)" -eq 0 ] || SUDO=sudo; \
	{ $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends slurm-wlm munge; \
	} > build/slurm-install.log 2>&1 && rm -f build/slurm-install.log && slurmd -V || \
	  echo "slurm: cannot install slurm-wlm and munge (the Slurm tests will skip): $$(tail -n 2 build/slurm-install.log)"
