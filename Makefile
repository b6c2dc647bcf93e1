# Two entry points; each sets up everything it needs on a fresh machine.
#   make demo   - render the example strategies, compile for llvm-cpu and gfx942, run and check on CPU
#   make test   - the test suite (what CI runs)
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.tdsl-installed

.PHONY: demo test goldens bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/python examples/demo.py

test: $(STAMP)
	$(VENV)/bin/pytest -q

goldens: $(STAMP)
	$(VENV)/bin/pytest -q --update-goldens

bench: $(STAMP)
	$(VENV)/bin/python benchmarks/render_bench.py

clean:
	rm -rf $(VENV) build dist *.egg-info
