# timeaware — common tasks. `make help` lists them.

GO      ?= go
VENV    ?= .venv
PYTHON  ?= $(VENV)/bin/python
BIN     := bin/timeaware
SHARED  ?= ../shared

.PHONY: help build demo test test-go test-python vet bench bench-go bench-pairs bench-splits venv clean

help:
	@echo "make demo         build pairs from the built-in sample (no downloads, no services)"
	@echo "make test         go vet, go test -race, and the Python interop tests"
	@echo "make bench        Go benchmarks and the pairs benchmark against the Python baseline"
	@echo "make build        build $(BIN)"

build:
	$(GO) build -o $(BIN) ./cmd/timeaware

demo: build
	$(BIN) demo --out demo-out

vet:
	$(GO) vet ./...

test-go:
	$(GO) test -race ./...

$(VENV)/.installed: tests/python/requirements.txt
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -r tests/python/requirements.txt
	touch $@

venv: $(VENV)/.installed

test-python: build venv
	TIMEAWARE_BIN=$(CURDIR)/$(BIN) TIMEAWARE_SHARED=$(SHARED) $(PYTHON) -m pytest -p no:cacheprovider -q tests/python

test: vet test-go test-python

bench-go:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# SAMPLES=100000 make bench-pairs for a quicker run.
bench-pairs: build venv
	PYTHON=$(PYTHON) bash bench/pairs/run.sh $(SAMPLES)

# TRAIN=20000 TEST=5000 make bench-splits for a quicker run.
bench-splits:
	bash bench/splits/run.sh $(TRAIN) $(TEST)

bench: bench-go bench-pairs bench-splits

clean:
	rm -rf bin demo-out
