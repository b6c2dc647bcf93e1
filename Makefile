# Two entry points; each sets up everything it needs on a fresh machine.
#   make demo   - render the example strategies, compile for llvm-cpu and gfx942, run and check on CPU
#   make test   - the test suite (what CI runs)
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.tdsl-installed

.PHONY: demo test check lint goldens bench clean models

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/python examples/demo.py

# One pytest worker per core, at most 4 (each test file stays on one worker: module fixtures
# such as the two-node Ray cluster start once); the 15 slowest tests are listed at the end.
test: $(STAMP) lint
	$(VENV)/bin/pytest -q -n auto --maxprocesses=4 --dist loadfile --durations=15 -m "not models"

# Every command (ops, compile and run with auto(), run) on every example model and committed
# ONNX node test: what `make test` samples (5 minutes on two cores).
models: $(STAMP)
	$(VENV)/bin/pytest -q -n auto --maxprocesses=4 -m models tests/cli/test_real_models.py

# The fast lane for the inner loop: the unit tests, without iree-compile runs, slow, Ray or
# end-to-end tests (under two minutes on two cores).
check: $(STAMP) lint
	$(VENV)/bin/pytest -q -n auto --maxprocesses=4 -m "not compile and not slow and not ray and not e2e"

# The formatter and the linter (ruff; settings in pyproject.toml). `ruff format .` fixes the format.
lint: $(STAMP)
	$(VENV)/bin/ruff format --check --quiet .
	$(VENV)/bin/ruff check --quiet .

goldens: $(STAMP)
	$(VENV)/bin/pytest -q --update-goldens

bench: $(STAMP)
	$(VENV)/bin/python benchmarks/render_bench.py

clean:
	rm -rf $(VENV) build dist *.egg-info
