# The manual as a site: included by the Makefile (-include mk/*.mk).
#   make docs [DOCS_SITE=build/docs]   docs/*.md -> DOCS_SITE with `mkdocs build --strict` (mkdocs.yml: nav, link and
#       anchor validation as warnings): a broken link or anchor, or a page not in the nav, fails the build
DOCS_SITE ?= build/docs

.PHONY: docs

# mkdocs comes into .venv from requirements-docs.txt (through requirements-test.txt): a change to it remakes the venv
$(VENV)/.stamp: requirements-docs.txt

docs: venv
	@$(VENV)/bin/mkdocs build --strict --quiet --config-file mkdocs.yml --site-dir "$(abspath $(DOCS_SITE))" && \
	  echo "docs: $(abspath $(DOCS_SITE))/index.html"
