# Installing as HPC centres install software: included by the Makefile (-include mk/*.mk).
#   make install PREFIX=<dir>   <dir>/bin/h5dlio and bin/h5bench_dlio (the kernel, its HDF5 found through its rpath),
#                               share/h5dlio/{reference-configs,examples}, share/doc/h5dlio (README, docs/),
#                               the Python tools `h5dlio sizing` and `h5dlio runs` (libexec/h5dlio/, their packages in
#                               share/h5dlio: scripts/install_tools.py),
#                               share/man/man1/h5dlio.1 (generated from the program's --help: the options table) and an
#                               Lmod modulefile share/modulefiles/h5dlio/<version>.lua (`module use <dir>/share/modulefiles;
#                               module load h5dlio`). Installing again replaces these files; nothing else in PREFIX is
#                               touched.
#   make lmod                   Debian's Lmod, for the modulefile's test
PREFIX ?=

.PHONY: install lmod

## install h5dlio, h5bench_dlio, the configs, examples, docs, a man page and an Lmod modulefile into PREFIX=<dir>
install: build
	@[ -n "$(PREFIX)" ] || { echo "make install: set PREFIX=<dir> (where bin/, share/ go)" >&2; exit 2; }
	@[ ! -e "$(PREFIX)" ] || [ -d "$(PREFIX)" ] || { echo "make install: PREFIX=$(PREFIX): not a folder" >&2; exit 2; }
	@set -e; p="$(abspath $(PREFIX))"; ver=$$($(BIN) --version | cut -d' ' -f2); \
	cmake --install $(BUILD_DIR) --prefix "$$p" >/dev/null; \
	mkdir -p "$$p/share/h5dlio" "$$p/share/doc/h5dlio" "$$p/share/man/man1" "$$p/share/modulefiles/h5dlio"; \
	rm -rf "$$p/share/h5dlio/reference-configs" "$$p/share/h5dlio/examples"; \
	cp -r reference-configs examples "$$p/share/h5dlio/"; \
	python3 scripts/install_tools.py "$$p"; \
	cp README.md docs/*.md "$$p/share/doc/h5dlio/"; \
	python3 scripts/manpage.py "$$p/bin/h5dlio" > "$$p/share/man/man1/h5dlio.1"; \
	ln -sfn h5dlio.1 "$$p/share/man/man1/h5bench_dlio.1"; \
	python3 scripts/modulefile.py "$$p" "$$ver" > "$$p/share/modulefiles/h5dlio/$$ver.lua"; \
	echo "installed h5dlio $$ver into $$p (module use $$p/share/modulefiles; module load h5dlio)"

## Debian's Lmod (the modulefile's test)
lmod:
	@if [ -f /usr/share/lmod/lmod/init/bash ]; then echo "lmod: installed"; exit 0; fi; \
	echo "lmod: installing the Debian package (the modulefile's test)"; SUDO=""; [ "$$(id -u)" -eq 0 ] || SUDO=sudo; \
	$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends lmod >/dev/null
