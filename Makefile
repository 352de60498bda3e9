# The two commands a fresh machine needs:  make html  (build the site)  and  make test.
# Both set up .venv on first use (Python 3.11), plus the offline assets and tokenizer cache.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
PY     := $(VENV)/bin/python
SPHINX := $(VENV)/bin/sphinx-build -W --keep-going -c .

# The book's languages, from the one table of them (ext/locale_table.py).
LOCALES := $(shell $(PYTHON) -m ext.locale_table folders)

.PHONY: setup html site library check test quick clean help pdf portability publish

help:
	@echo "make html   build both locales into _build/site (sets itself up on first use)"
	@echo "make test   the whole test suite, including the -W build of both locales"
	@echo "make quick  the authors' loop: unit, press and structure tests, no full build (minutes)"
	@echo "make check CH=02   run the snippet checker on chapter 02"
	@echo "make portability   run every chapter and figure under other numeric paths (CPU kernels, threads)"
	@echo "make pdf    _build/pdf/agentrl-en.pdf and agentrl-zh.pdf (apt-installs chromium, poppler-utils, fonts-noto-cjk if missing)"
	@echo "make publish   html + pdf, both PDFs into _build/site, and the tree checked: what the forge serves"
	@echo "make clean  remove _build (keeps .venv and the execution cache in _build/.jupyter_cache)"

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[book,test]'
	touch $@

$(VENV)/.assets: $(VENV)/.installed scripts/setup_assets.py scripts/setup_tokenizer.py
	$(PY) scripts/setup_assets.py
	$(PY) scripts/setup_tokenizer.py
	touch $@

setup: $(VENV)/.assets

library: setup
	$(PY) scripts/build_library.py --check

# Each locale is its own Sphinx run (myst-nb keeps executed notebooks next to the output dir).
# html-en, html-zh, ...: a pattern rule, so these are not declared phony (no file has the name).
# Chapters execute two at a time where there are two cores (ext/execute_ahead.py); a chapter's
# budget is its kernel's CPU time, which a neighbouring kernel does not stretch (ext/timings.py).
EXECUTION_JOBS := $(shell $(PYTHON) -c "import os; print(min(2, os.cpu_count() or 1))")

html-%: setup
	$(SPHINX) -D language=$(shell $(PYTHON) -m ext.locale_table language $*) \
	  -D agentrl_execution_jobs=$(EXECUTION_JOBS) book/$* _build/$*/html

html: library $(addprefix html-,$(LOCALES))
	$(PY) scripts/assemble_site.py
	@echo "site: _build/site/index.html"

# PDF: singlehtml per language (same execution cache as html) printed by headless Chromium.
# PDF_FLAGS: --side-by-side when html has just filled the cache (make publish, below).
pdf: library
	$(PY) scripts/build_pdf.py $(PDF_FLAGS)

# The tree the publishing workflow uploads (.github/workflows/publish.yml): the site with both
# PDFs, checked (every language, notebook and internal link; no local path). html comes first
# and fills the execution cache, so the PDF's two singlehtml builds run side by side (a
# target-specific variable: make passes it on to publish's prerequisites).
publish: PDF_FLAGS = --side-by-side
publish: html pdf
	$(PY) scripts/assemble_site.py --publish

check: setup
	$(PY) scripts/check_tutorial_snippets.py --chapters $(CH)

# Every chapter and figure again under ATen's portable kernels + MKL's reproducible mode (two
# threads) and under AVX2 kernels (one thread): an output that moves fails, naming file:line.
portability: setup
	$(PY) scripts/check_portability.py

# What runs where, each part using both cores of a 2-core machine:
# - html: the English build executes every chapter into the execution cache and gates its
#   outputs on this machine's native path (two kernels at a time, EXECUTION_JOBS above); the
#   Chinese build and the PDF's singlehtml builds take the same outputs from that cache.
# - pdf: the two languages' singlehtml builds side by side (the cache is full after html),
#   then each language prints in Chromium, one core each.
# - portability: every chapter and figure under the two other numeric paths, two at a time,
#   the longest jobs first.
# - pytest: every test, on two workers (pytest-xdist, a test file to each worker, so a file's
#   module fixtures are built once); the figures on the native path are its test_figures.
PYTEST_WORKERS := -n 2 --dist loadfile

test: publish portability
	$(PY) scripts/sync_locales.py --check
	for locale in $(LOCALES); do $(PY) scripts/check_structure.py --locale $$locale || exit 1; done
	$(PY) -m pytest $(PYTEST_WORKERS)

# The authors' loop: what `make test` checks without building the book, the PDF or portability:
# the library is current, the translations are in step, and every test not marked slow (the
# structure rules and the book plan over the real book, the press's unit tests, the chapters'
# unit tests, the linter). Slow tests: tests/conftest.py.
quick: setup
	$(PY) scripts/build_library.py --check
	$(PY) scripts/sync_locales.py --check
	$(PY) -m pytest $(PYTEST_WORKERS) -m "not slow"

clean:
	find _build -mindepth 1 -maxdepth 1 ! -name .jupyter_cache -exec rm -rf {} +
