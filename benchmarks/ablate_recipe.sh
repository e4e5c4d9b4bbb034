#!/usr/bin/env bash
# The recipe's levers, one off at a time, at a small scale: every file cut to its first 15,000 rows, one
# epoch, the tokenizer of a full run (make train's, or the one a run keeps in its checkpoint folder). Each run writes runs/ablate/NAME (model, training log), then the
# behavioural suite's selection part and the composition scores on the dev files. About 6 minutes a run
# on one core of the 2-core machine. README ("How the recipe was chosen") reports the figures.
#
#   bash benchmarks/ablate_recipe.sh assets/model/tokenizer.json [NAME ...]
set -euo pipefail
TOKENIZER=$1; shift
DATA=${DATA_DIR:-../shared/data}
PY=${PYTHON:-.venv/bin/python}
BASE="sst2=1 yelp=1 pros_cons=1 tweets=1 imdb=0.5 multi_domain=1 lexicon=1"
FULL="cad=3 negation=2 expectation=1 contrast=0.5 negated_praise=2 identity=1"
declare -A CHANGE=(
  [base]="cad=0 negation=0 expectation=0 contrast=0 negated_praise=0 identity=0" [full]=""
  [no-cad]="cad=0" [no-negation]="negation=0 expectation=0" [no-contrast]="contrast=0"
  [no-praise]="negated_praise=0" [no-identity]="identity=0"
)
NAMES=("$@")
[ ${#NAMES[@]} -gt 0 ] || NAMES=(base full no-cad no-negation no-contrast no-praise no-identity)
for name in "${NAMES[@]}"; do
  out=runs/ablate/$name
  mkdir -p "$out"
  # shellcheck disable=SC2086  # the weights are words on purpose; a later NAME=W overrides an earlier one
  $PY -m transformer.train --data-dir "$DATA" --output-dir "$out/model" --checkpoint-dir "$out/checkpoints" \
    --tokenizer "$TOKENIZER" --max-rows 15000 --epochs 1 --threads 1 \
    --source-weights $BASE $FULL ${CHANGE[$name]} > "$out/train.log" 2>&1
  $PY -m transformer.behaviour --model "$out/model" --part selection --examples 0 --json "$out/behaviour.json" > /dev/null
  $PY -m transformer.evaluate --model "$out/model" --data "$DATA/cad/dev.tsv.gz" "$DATA/sst2/glue_dev.tsv" \
    "$DATA/yelp/dev.tsv.gz" "$DATA/pros_cons/dev.tsv.gz" "$DATA/tweets/dev.tsv.gz" > "$out/evaluate.jsonl" 2> /dev/null
done
