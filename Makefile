# timeaware — common tasks. `make help` lists them.

GO      ?= go
VENV    ?= .venv
PYTHON  ?= $(VENV)/bin/python
# The trainers tier (python/tests/trainers): torch, TRL, VeRL, OpenRLHF on CPU.
TRAINERS_VENV ?= .venv-trainers
# The verifiers tier (python/tests/verifiers): verifiers, whose openai pin the
# trainers tier's cannot share.
VERIFIERS_VENV ?= .venv-verifiers
# The GPU tier (python/tests/gpu): one NVIDIA GPU; WHEELS=DIR installs its pins from
# a wheel folder (make gpu-wheels WHEELS=DIR fills one) where there is no index.
GPU_VENV ?= .venv-gpu
# The baselines of bench-splits and bench-contamination (datasketch;
# datatrove with spaCy), kept out of $(VENV) so that their dependencies
# never move the interop tier's pins.
BENCH_VENV ?= .venv-bench
GPU_PIP  = $(GPU_VENV)/bin/pip install --progress-bar off --disable-pip-version-check $(if $(WHEELS),--no-index --find-links $(abspath $(WHEELS)))
BIN     := bin/timeaware
SHARED  ?= ../shared
# Linters, pinned. staticcheck goes into .bin under a versioned name (a new
# version installs itself); ruff and mypy (python/requirements-lint.txt) go
# into $(VENV).
STATICCHECK_VERSION := v0.8.2
LINT_BIN    := $(CURDIR)/.bin
STATICCHECK := $(LINT_BIN)/staticcheck-$(STATICCHECK_VERSION)
# Mutation testing, pinned likewise: the packages whose tests guard what
# users train on, each held to 90 % efficacy and mutant coverage.
GREMLINS_VERSION := v0.6.0
GREMLINS    := $(LINT_BIN)/gremlins-$(GREMLINS_VERSION)
MUTANT_PKGS := rewards timers splits prefpairs tokenizer

.PHONY: test-stress mutants mutants-ci help build demo serve bench-synth test test-go test-python test-trainers examples vet lint lint-tools bench bench-go bench-pairs bench-splits bench-contamination bench-tokenizer bench-compare venv venv-bench venv-trainers venv-verifiers test-verifiers venv-gpu test-gpu gpu-wheels clean check-shared

help:
	@echo "make demo         build pairs from the built-in sample and score a rollout through the verifier"
	@echo "make serve        run the verifier service on 127.0.0.1:8080 with built-in defaults"
	@echo "make test         make lint, go test -race, the Python interop tests, the docs' examples, the trainers and verifiers tiers and mutation testing of the last commit"
	@echo "make lint         go vet and staticcheck over ./..., ruff and mypy over python/timeaware"
	@echo "make mutants      mutation testing of $(MUTANT_PKGS) (DIFF=REF: only what changed since REF)"
	@echo "make test-stress  PKG=./verifier COUNT=20: tests run again and again beside two busy loops per core (PYTEST=PATH for Python tests)"
	@echo "make test-trainers  TRL, VeRL and OpenRLHF on CPU against our outputs and server"
	@echo "make test-gpu     the GPU tier on one NVIDIA GPU: bf16 MarginDPO, GRPO against the server, eval run; figures in out/gpu/figures.json"
	@echo "make test-verifiers  verifiers' vf-eval on the timeaware-env environment against our server"
	@echo "make examples     run every example of the docs with bin/timeaware (UPDATE=1 rewrites stale outputs)"
	@echo "make bench        Go benchmarks and the pairs benchmark against the Python baseline"
	@echo "make build        build $(BIN)"

build:
	$(GO) build -o $(BIN) ./cmd/timeaware

demo: build
	$(BIN) demo --out out/demo

# The verifier service on 127.0.0.1:8080 with built-in defaults (Ctrl-C to stop).
serve: build
	$(BIN) serve

vet:
	$(GO) vet ./...

$(STATICCHECK):
	GOBIN=$(LINT_BIN) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	mv $(LINT_BIN)/staticcheck $@

$(VENV)/.lint-installed: python/requirements-lint.txt $(VENV)/.installed
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -r python/requirements-lint.txt
	touch $@

lint-tools: $(STATICCHECK) $(VENV)/.lint-installed

# Configured in python/pyproject.toml ([tool.ruff], [tool.mypy]).
lint: vet lint-tools
	$(STATICCHECK) ./...
	cd python && $(abspath $(VENV))/bin/ruff check timeaware
	cd python && $(abspath $(VENV))/bin/mypy

$(GREMLINS):
	GOBIN=$(LINT_BIN) $(GO) install github.com/go-gremlins/gremlins/cmd/gremlins@$(GREMLINS_VERSION)
	mv $(LINT_BIN)/gremlins $@

# Efficacy and mutant coverage per package; fails below 90 %. Equivalent
# mutants are listed with reasons in internal/mutants/equivalent/.
mutants: $(GREMLINS)
	$(GO) run ./internal/mutants -gremlins $(GREMLINS) $(if $(DIFF),-diff $(DIFF)) $(MUTANT_PKGS)

# CI: the packages and lines the last commit changed.
mutants-ci:
	@if git rev-parse -q --verify HEAD~1 >/dev/null; then \
		$(MAKE) --no-print-directory mutants DIFF=HEAD~1; \
	else echo "mutants: no parent commit in this checkout; skipped"; fi

# The tests read the reference data beside the checkout (../shared): say so
# in one line instead of dozens of failures.
check-shared:
	@test -d $(SHARED)/data/tictoc-v1 || { echo "make: $(SHARED)/data/tictoc-v1 is missing: the tests need the shared reference data (../shared) beside the checkout" >&2; exit 2; }

test-go: check-shared
	$(GO) test -race ./...

$(VENV)/.installed: python/tests/interop/requirements.txt
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -r python/tests/interop/requirements.txt
	touch $@

venv: $(VENV)/.installed

test-python: check-shared build venv
	TIMEAWARE_BIN=$(CURDIR)/$(BIN) TIMEAWARE_SHARED=$(SHARED) $(PYTHON) -m pytest -p no:cacheprovider -q python/tests/interop

# About 6 GB and a few minutes, once: pip says what it collects and installs
# (--progress-bar off keeps CI logs to a line a package).
$(TRAINERS_VENV)/.installed: python/tests/trainers/requirements.txt python/tests/trainers/requirements-nodeps.txt
	@echo "make: creating $(TRAINERS_VENV): torch, TRL, VeRL, OpenRLHF and Ray on CPU (about 6 GB, a few minutes, once)"
	python3 -m venv $(TRAINERS_VENV)
	@echo "make: installing python/tests/trainers/requirements.txt into $(TRAINERS_VENV)"
	$(TRAINERS_VENV)/bin/pip install --progress-bar off --disable-pip-version-check -r python/tests/trainers/requirements.txt
	@echo "make: installing python/tests/trainers/requirements-nodeps.txt (without their dependencies) into $(TRAINERS_VENV)"
	$(TRAINERS_VENV)/bin/pip install --progress-bar off --disable-pip-version-check --no-deps -r python/tests/trainers/requirements-nodeps.txt
	@echo "make: $(TRAINERS_VENV) is ready"
	touch $@

venv-trainers: $(TRAINERS_VENV)/.installed

test-trainers: check-shared build venv-trainers
	TIMEAWARE_BIN=$(CURDIR)/$(BIN) TIMEAWARE_SHARED=$(SHARED) $(TRAINERS_VENV)/bin/python -m pytest -p no:cacheprovider -q --durations=15 python/tests/trainers

$(VERIFIERS_VENV)/.installed: python/tests/verifiers/requirements.txt
	python3 -m venv $(VERIFIERS_VENV)
	$(VERIFIERS_VENV)/bin/pip install --progress-bar off --disable-pip-version-check -r python/tests/verifiers/requirements.txt
	touch $@

venv-verifiers: $(VERIFIERS_VENV)/.installed

test-verifiers: build venv-verifiers
	TIMEAWARE_BIN=$(CURDIR)/$(BIN) $(VERIFIERS_VENV)/bin/python -m pytest -p no:cacheprovider -q python/tests/verifiers

$(GPU_VENV)/.installed: python/tests/gpu/requirements.txt
	python3 -m venv $(GPU_VENV)
	$(GPU_PIP) -r python/tests/gpu/requirements.txt
	$(GPU_PIP) --no-deps -e ./python
	touch $@

venv-gpu: $(GPU_VENV)/.installed

# A bin/timeaware already there (built elsewhere and copied) is used as it is.
test-gpu: check-shared venv-gpu
	@test -x $(BIN) || $(MAKE) build
	TIMEAWARE_BIN=$(CURDIR)/$(BIN) TIMEAWARE_SHARED=$(SHARED) $(GPU_VENV)/bin/python python/tests/gpu/run.py --out out/gpu/figures.json

# The wheels of the GPU tier, for a GPU machine without an index: run where
# pip reaches one, with the GPU machine's Python, then copy WHEELS over.
gpu-wheels:
	@test -n "$(WHEELS)" || { echo "make gpu-wheels: set WHEELS=DIR" >&2; exit 2; }
	python3 -m pip download --progress-bar off --disable-pip-version-check -d $(WHEELS) -r python/tests/gpu/requirements.txt "setuptools>=64"

# Every sh and python example of the docs, run verbatim with bin/timeaware in
# a scratch checkout, its output compared with the doc's
# (internal/docexamples). UPDATE=1 rewrites stale output blocks;
# DOC=pairs runs only the docs whose path contains "pairs".
examples: check-shared build venv
	$(GO) test -count=1 -run '^TestDocExamples$$' ./internal/docexamples -args \
		-bin $(CURDIR)/bin -python $(CURDIR)/$(PYTHON) -shared $(abspath $(SHARED)) \
		$(if $(DOC),-doc $(DOC)) $(if $(UPDATE),-update)

# Each stage prints its time as it ends, and make test ends with a table of
# them (.ci/stages.sh), stopping at the first that fails. The trainers' and
# verifiers' virtualenvs, mostly downloads and disk, are made in the
# background while the linters and the Go and interop tests use the CPU.
TEST_STAGES := --background venv-trainers,venv-verifiers lint test-go test-python examples \
	--wait test-trainers test-verifiers mutants-ci
test: check-shared
	@MAKE='$(MAKE)' bash .ci/stages.sh make $(TEST_STAGES)

# Tests run COUNT times beside LOAD busy loops per core, as on a shared CI
# machine, with a count of the failures of each (internal/stress):
#   make test-stress PKG=./verifier COUNT=20 [RUN=REGEXP]     Go, with -race
#   make test-stress PYTEST=python/tests/interop/test_adapter.py [PYTHON=.venv-trainers/bin/python]
COUNT ?= 20
LOAD  ?= 2
test-stress: check-shared build $(if $(PYTEST),venv)
	$(if $(strip $(PKG)$(PYTEST)),,@echo "make test-stress: set PKG=./PKG (Go) or PYTEST=PATH (pytest's arguments)" >&2; exit 2)
	$(if $(PKG),$(GO) run ./internal/stress -count $(COUNT) -load $(LOAD) $(if $(RUN),-run '$(RUN)') $(PKG))
	$(if $(PYTEST),TIMEAWARE_BIN=$(CURDIR)/$(BIN) TIMEAWARE_SHARED=$(SHARED) $(GO) run ./internal/stress -count $(COUNT) -load $(LOAD) -pytest $(PYTHON) -- $(PYTEST))

bench-go:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# SAMPLES=100000 make bench-pairs for a quicker run.
bench-pairs: build venv
	PYTHON=$(PYTHON) bash bench/pairs/run.sh $(SAMPLES)

# TRAIN=20000 TEST=5000 make bench-splits for a quicker run.
bench-splits: venv-bench
	PYTHON=$(BENCH_VENV)/bin/python bash bench/splits/run.sh $(TRAIN) $(TEST)
	$(MAKE) bench-contamination

# The contamination check against datatrove's n-gram filter (1M x 100k;
# TRAIN=100000 BENCH=10000 make bench-contamination for a quicker run).
bench-contamination: venv-bench
	PYTHON=$(BENCH_VENV)/bin/python bash bench/contamination/run.sh $(TRAIN) $(BENCH)

$(BENCH_VENV)/.installed: bench/splits/requirements.txt bench/contamination/requirements.txt
	python3 -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/pip install --quiet --disable-pip-version-check -r bench/splits/requirements.txt -r bench/contamination/requirements.txt
	touch $@

venv-bench: $(BENCH_VENV)/.installed

# Counting tokens with a tokenizer.json: package tokenizer against Hugging
# Face's tokenizers on the same tokenizer and text.
bench-tokenizer: venv
	PYTHON=$(PYTHON) bash bench/tokenizer/run.sh

# The verifier service on loopback against the in-process Python reward;
# TIMEAWARE_BENCH_SECONDS=5 make bench-serve for a quicker run.
bench-serve:
	PYTHON=$(PYTHON) bash bench/serve/run.sh

# 1,000,000 records through synth timestamps and synth budget, and 100,000
# Time Puzzles; RECORDS=100000 PUZZLES=10000 make bench-synth for a quicker run.
bench-synth: build venv
	PYTHON=$(PYTHON) bash bench/synth/timestamps.sh $(RECORDS)
	PYTHON=$(PYTHON) bash bench/synth/budget.sh $(RECORDS)
	bash bench/synth/puzzles.sh $(PUZZLES)

bench: bench-go bench-pairs bench-splits bench-serve bench-synth bench-tokenizer

# The Go side of the benches on another revision's binary and the
# checkout's, alternating on the same inputs, as ratios with their spread:
# make bench-compare BASE=main~5 [CASES="pairs score"] (docs/development.md).
bench-compare: venv
	@test -n "$(BASE)" || { echo "make bench-compare: set BASE to the revision to compare with, e.g. BASE=HEAD~1" >&2; exit 2; }
	PYTHON=$(PYTHON) bash bench/compare.sh $(BASE) $(CASES)

clean:
	rm -rf bin out
