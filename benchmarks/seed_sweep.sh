#!/usr/bin/env bash
# One recipe at several seeds, at a small scale: every file cut to its first MAX_ROWS rows (6,000 by default), one epoch, make train's
# tokenizer, make train's source weights. Each run writes runs/sweep/NAME-sSEED (model, training log), then the
# behavioural suite's selection part, the composition scores on the dev files and the held-out probe
# (python -m transformer.probe). benchmarks/README.md ("The seed table") reports the figures.
#
# FULL=1 runs make train's command instead (every row, its epochs, a tokenizer it learns, --keep-steps 3 as make
# train passes it) into runs/full/NAME-sSEED, whose model folder's metrics.json holds the dev and test figures.
#
#   bash benchmarks/seed_sweep.sh NAME "0 1 2" [transformer.train flags ...]
#   bash benchmarks/seed_sweep.sh clp "0 1 2" --pairing-weight 1
#   FULL=1 bash benchmarks/seed_sweep.sh clp035 0 --pairing-weight 0.35
set -euo pipefail
NAME=$1 SEEDS=$2; shift 2
DATA=${DATA_DIR:-../shared/data}
PY=${PYTHON:-.venv/bin/python}
TOKENIZER=${TOKENIZER:-assets/model/tokenizer.json}
SCALE=(--tokenizer "$TOKENIZER" --max-rows "${MAX_ROWS:-6000}" --epochs 1) FOLDER=runs/sweep
if [ -n "${FULL:-}" ]; then SCALE=(--keep-steps 3) FOLDER=runs/full; fi
for seed in $SEEDS; do
  out=$FOLDER/$NAME-s$seed
  mkdir -p "$out"
  $PY -m transformer.train --data-dir "$DATA" --output-dir "$out/model" --checkpoint-dir "$out/checkpoints" \
    "${SCALE[@]}" --threads 1 --seed "$seed" "$@" > "$out/train.log" 2>&1
  $PY -m transformer.behaviour --model "$out/model" --part selection --examples 0 --json "$out/behaviour.json" > /dev/null
  $PY -m transformer.evaluate --model "$out/model" --data "$DATA/cad/dev.tsv.gz" "$DATA/sst2/glue_dev.tsv" \
    "$DATA/yelp/dev.tsv.gz" "$DATA/pros_cons/dev.tsv.gz" "$DATA/tweets/dev.tsv.gz" > "$out/evaluate.jsonl" 2> /dev/null
  if $PY -c "import transformer.probe" 2> /dev/null; then
    $PY -m transformer.probe --model "$out/model" --json "$out/probe.json" > /dev/null
  fi
done
