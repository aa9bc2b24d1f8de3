# The manual as a site: included by the Makefile (-include mk/*.mk).
#   make docs [DOCS_SITE=build/docs]   docs/*.md -> DOCS_SITE with `mkdocs build --strict` (mkdocs.yml: nav, link and
#       anchor validation as warnings): a broken link or anchor, or a page not in the nav, fails the build.
#       MkDocs empties its site folder first, so DOCS_SITE must be new, empty, or a site this target made (its
#       .h5dlio-docs mark): any other folder is refused (exit 2) with nothing touched.
DOCS_SITE ?= build/docs

.PHONY: docs

# mkdocs comes into .venv from requirements-docs.txt (through requirements-test.txt): a change to it remakes the venv
$(VENV)/.stamp: requirements-docs.txt

## the manual as a site: mkdocs build --strict into DOCS_SITE (default build/docs)
docs: venv
	@site="$(abspath $(DOCS_SITE))"; \
	if [ -z "$(strip $(DOCS_SITE))" ]; then echo "make docs: DOCS_SITE is empty: give the folder for the site" >&2; exit 2; fi; \
	if [ -e "$$site" ] && [ ! -d "$$site" ]; then echo "make docs: DOCS_SITE=$(DOCS_SITE): not a folder" >&2; exit 2; fi; \
	if [ -d "$$site" ] && [ -n "$$(ls -A "$$site")" ] && [ ! -f "$$site/.h5dlio-docs" ]; then \
	  echo "make docs: DOCS_SITE=$(DOCS_SITE): holds files make docs did not write (no .h5dlio-docs mark), and MkDocs" \
	    "would delete them: give a new or empty folder" >&2; exit 2; fi; \
	$(VENV)/bin/mkdocs build --strict --quiet --config-file mkdocs.yml --site-dir "$$site" && \
	  touch "$$site/.h5dlio-docs" && echo "docs: $$site/index.html"
