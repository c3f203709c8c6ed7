# neorag: `make run` (index the sample corpus, open the chat) and `make test` (everything,
# against a real Neo4j + GDS). Heavy artefacts are cached outside the checkout so a fresh
# clone on a warm machine is ready in seconds:
#   $(CACHE)/deps-<lock hash>   Python dependencies from requirements.lock
#   $(CACHE)/neo4j-<pom hash>   Neo4j + GDS jars from Maven Central (ops/neo4j/assemble.sh)
# .venv is a thin per-checkout venv that sees the cached dependencies through a .pth file
# and holds this checkout as an editable install (the `neorag` command).
SHELL := /bin/bash
.DEFAULT_GOAL := help
PYTHON ?= python3.11
# NEORAG_CACHE from the environment (the README's name for it) or CACHE=… on the command line
CACHE ?= $(or $(NEORAG_CACHE),$(HOME)/.cache/neorag)
export NEORAG_CACHE := $(CACHE)
LOCK_KEY := $(shell sha1sum requirements.lock | cut -c1-12)
PROJECT_KEY := $(shell cat requirements.lock pyproject.toml | sha1sum | cut -c1-12)
DEPS := $(CACHE)/deps-$(LOCK_KEY)
VENV := .venv
PY := $(VENV)/bin/python
SITE := lib/python3.11/site-packages

.PHONY: help install deps run test check lint neo4j-start neo4j-stop neo4j-status neo4j-assemble browser-deps lock bench eval results docs clean

help:
	@echo "make run     install, index the bundled sample corpus (embedded backend), open the chat on http://127.0.0.1:8501"
	@echo "make test    install, start a real Neo4j + GDS, run every test, stop Neo4j"
	@echo "make neo4j-start | neo4j-stop | neo4j-status   a local Neo4j + GDS for NEORAG_BACKEND=neo4j (bolt 7687, browser 7474)"
	@echo "make check   the inner loop: lint + the tests that need no Neo4j, browser, model or dataset"
	@echo "make lint    ruff;  make bench SUITE=… / make eval   benchmarks and the evaluation harness"
	@echo "make results renders docs/results.md and the README's headline table from bench/out"

# The directory name carries the lock file's hash, so existence is the whole test (a fresh
# clone's newer file times must not trigger a rebuild). Built aside and renamed into place,
# so a concurrent run never sees a half-installed environment.
$(DEPS)/.complete:
	@command -v $(PYTHON) >/dev/null || { echo "make: $(PYTHON) not found; set PYTHON=/path/to/python3.11"; exit 1; }
	rm -rf $(DEPS).building
	$(PYTHON) -m venv $(DEPS).building
	$(DEPS).building/bin/python -m pip install --quiet --upgrade pip
	$(DEPS).building/bin/python -m pip install --quiet -r requirements.lock
	touch $(DEPS).building/.complete
	rm -rf $(DEPS) && mv $(DEPS).building $(DEPS)

deps: $(DEPS)/.complete

$(VENV)/.installed-$(PROJECT_KEY): | $(DEPS)/.complete
	rm -rf $(VENV)
	$(PYTHON) -m venv --without-pip $(VENV)
	echo "$(abspath $(DEPS))/$(SITE)" > $(VENV)/$(SITE)/neorag-deps.pth
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $@

install: $(VENV)/.installed-$(PROJECT_KEY)

neo4j-assemble:
	@ops/neo4j/assemble.sh >/dev/null

neo4j-start: install
	@ops/neo4j/server.sh start
	@$(PY) ops/neo4j/wait_ready.py bolt://127.0.0.1:$${NEO4J_BOLT_PORT:-7687} $${NEO4J_RUN_DIR:-.neo4j/dev}/password 240
	@echo "Browser: http://127.0.0.1:$${NEO4J_HTTP_PORT:-7474}/browser/  user neo4j, password in $${NEO4J_RUN_DIR:-.neo4j/dev}/password"

neo4j-stop:
	@ops/neo4j/server.sh stop

neo4j-status:
	@ops/neo4j/server.sh status

browser-deps:
	@ops/browser-deps.sh

# The same data dir and collection as the CLI (NEORAG_DATA_DIR, NEORAG_COLLECTION; default
# .neorag and `default`), so `neorag ask` right after `make run` sees the sample corpus.
run: install
	$(PY) -m app.cli ingest sample_corpus
	$(PY) -m streamlit run streamlit_app.py \
	  --server.address 127.0.0.1 --server.port 8501 --server.headless true --browser.gatherUsageStats false

test: install neo4j-assemble browser-deps
	@ops/test.sh

# The inner loop: lint, then the tests that need no Neo4j, no browser, no model load and no
# dataset slice (make test runs everything).
check: lint
	NEORAG_SKIP_NEO4J=1 $(PY) -m pytest -q -n 2 --dist loadfile -m "not neo4j and not slow and not browser and not faults"

lint: install
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

# make bench SUITE=recall ARGS="--ablation tigrag-hops0"; python -m bench lists the suites.
bench: install neo4j-assemble
	@SUITE="$(SUITE)" ARGS="$(ARGS)" ops/bench.sh

eval: install neo4j-assemble
	@ops/eval.sh

# docs/results.md and README.md's headline table are rendered from bench/out/*.json
# (tests/bench/test_results_page.py fails when the committed pages differ from the render).
results: install
	$(PY) -m bench.results

# docs/configuration.md is rendered from the settings model (tests/app/test_settings_doc.py
# fails when the committed page differs from the render).
docs: install
	$(PY) -m app.settings_doc > docs/configuration.md.tmp && mv docs/configuration.md.tmp docs/configuration.md

lock:
	rm -rf /tmp/neorag-lock && $(PYTHON) -m venv /tmp/neorag-lock
	/tmp/neorag-lock/bin/pip install --quiet -e ".[dev]"
	{ echo "# Exact versions for every install (make install). Regenerate: make lock"; \
	  /tmp/neorag-lock/bin/pip freeze --exclude-editable; } > requirements.lock

clean:
	rm -rf $(VENV) .neorag .neo4j .pytest_cache .ruff_cache
