# Everything runs from a local virtual environment, created on first use.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
RUN_STAMP := $(VENV)/.run-stamp
STAMP := $(VENV)/.installed-stamp
NODE_STAMP := node_modules/.installed-stamp
DATA_DIR ?= ../shared/data
MODEL ?= assets/model

export GRADIO_ANALYTICS_ENABLED := False

.PHONY: install test test-fast lint format run bench load soak attack train evaluate artifacts clean

# Two stamps: running the app needs requirements.txt only; the tests and the Hub models need the rest too.
$(RUN_STAMP): requirements.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -r requirements.txt
	touch $(RUN_STAMP)

$(STAMP): $(RUN_STAMP) requirements-dev.txt requirements-hub.txt
	$(BIN)/python -m pip install -q -r requirements.txt -r requirements-dev.txt -r requirements-hub.txt
	touch $(STAMP)

# axe-core, for the accessibility browser test (tests/browser/test_axe_browser.py): package.json's pinned version, as
# package-lock.json records it (npm ci).
$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $(NODE_STAMP)

install: $(STAMP) $(NODE_STAMP)

## make test: lint (ruff, import contracts, mypy), then the whole suite (browser tests included) in TEST_WORKERS processes
## (pytest-xdist; each test module runs whole in one of them, the longest first); TEST_WORKERS=0 runs it in this one
TEST_WORKERS ?= 2
test: install lint
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

## make test-fast: the tests that start no browser, no server and nothing slow (markers in pyproject.toml), in
## TEST_WORKERS processes: about a minute, for every change; make test stays the whole suite
FAST := not browser and not served and not slow and not cuda
test-fast: install
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -n $(TEST_WORKERS) -m "$(FAST)" -q

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/mypy

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

## make run: the explorer on the bundled model, http://127.0.0.1:7860 (ARGS="--port 8080" passes app.py flags)
run: $(RUN_STAMP)
	$(BIN)/python app.py $(ARGS)

## make bench: speed report (medians, ratios from the same run)
bench: install
	HF_HUB_OFFLINE=1 $(BIN)/python -m benchmarks.run

## make load: concurrent API clients against the app and Gradio's no-op floor (bounded, stops by itself)
load: install
	HF_HUB_OFFLINE=1 $(BIN)/python -m benchmarks.load

## make soak: browser sessions, API callers and shared links in rounds; memory and disk after each (stops by itself)
soak: install
	HF_HUB_OFFLINE=1 $(BIN)/python -m benchmarks.soak

## make attack: the issues' attacks on a fresh server while a victim measures; a table of targets (loopback, stops by itself)
attack: install
	HF_HUB_OFFLINE=1 $(BIN)/python -m benchmarks.attack

## make train: retrain the bundled checkpoint from the data folder (README: "The model"), keeping KEEP_STEPS checkpoints
# 3 checkpoints (steps 0, about 4,400 and the final, about 19,000 = the model itself): 10.5 MB of assets at the
# bundled size; the Hub's branches take any number (python -m transformer.train's default, 12, is 58 MB)
KEEP_STEPS ?= 3
train: install
	$(BIN)/python -m transformer.train --data-dir $(DATA_DIR) --output-dir assets/model --threads 1 --keep-steps $(KEEP_STEPS)
	$(MAKE) artifacts

## make evaluate: the bundled model on every dev and test file, the hand-written sets, the behavioural suite and the
## held-out probe (people, names and places training never named; time and who holds an opinion)
evaluate: install
	$(BIN)/python -m transformer.evaluate --model assets/model --data $(DATA_DIR)/sst2/glue_dev.tsv \
		$(DATA_DIR)/sst2/sent_test.tsv $(DATA_DIR)/yelp/dev.tsv.gz $(DATA_DIR)/pros_cons/dev.tsv.gz \
		$(DATA_DIR)/tweets/dev.tsv.gz $(DATA_DIR)/cad/dev.tsv.gz $(DATA_DIR)/imdb/test.tsv.gz \
		$(DATA_DIR)/multi_domain/test.tsv.gz benchmarks/ood_reviews.tsv benchmarks/everyday_sentences.tsv
	$(BIN)/python -m transformer.behaviour --model assets/model
	$(BIN)/python -m transformer.probe --model assets/model

## make artifacts: head_atlas.json, errors.json, behaviour.json, faithfulness.json and training.json next to the bundled model (after
## make train), or next to another model folder: make artifacts MODEL=path/to/folder ARTIFACT_ARGS="--sentences 200"
artifacts: install
	$(BIN)/python -m transformer.artifacts --model $(MODEL) --data-dir $(DATA_DIR) $(ARTIFACT_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache node_modules
