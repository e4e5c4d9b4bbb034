"""The Hugging Face model card (README.md) written beside a trained checkpoint."""

from huggingface_hub import EvalResult, ModelCardData

from .classifier import TransformerClassifier

BODY = """
# Transformer Attention Explorer: SST-2 sentiment classifier

A small Transformer encoder trained **from scratch** (no pretrained weights) on the Stanford Sentiment
Treebank, binary (SST-2). It is the model behind the Transformer Attention Explorer demo; the
architecture is the one of the tutorial "Getting Started with Transformers in PyTorch".

| split | sentences | accuracy |
| --- | ---: | ---: |
| GLUE SST-2 dev (`{dev_file}`, model selection) | {dev_n} | {dev_accuracy:.4f} |
| SST-2 test (`{test_file}`, scored once) | {test_n} | {test_accuracy:.4f} |

## Architecture

WordPiece tokens ({vocab_size} entries) → embedding (scaled by √d) + sinusoidal positions →
{num_layers} Pre-LN encoder blocks (d_model {d_model}, {num_heads} heads, feed-forward {d_ff}, GELU,
dropout {dropout}) → LayerNorm → mean over the real tokens → MLP head → {labels}.
{parameters:,} parameters. Inputs longer than {max_len} tokens are cut.

The tokenizer's normaliser (saved in `tokenizer.json`) maps raw text and SST's treebank style to the same
form: lowercase, accents stripped, curly and treebank quotes to `"`, `-lrb-`/`-rrb-` to brackets, and
clitics split the treebank way (`don't`, `dont` → `do n't`; `it's` → `it 's`). Token offsets point into
the raw input.

## Training data and procedure

- Train: GLUE SST-2 `{train_file}` ({train_rows:,} phrases and sentences, with the labelled sub-phrases of
  the treebank's training parses). Dev: `{dev_file}`, used to pick the epoch. Test: `{test_file}`, the
  labelled SST-2 test sentences, scored once on the chosen checkpoint.
- Recipe: {recipe}.
- Best epoch: {best_epoch} of {epochs}. Training took {train_seconds:.0f} s on {device}, seed {seed}.
- Exact command (run from the repository root):

```
{command}
```

## How to load

```python
from transformer.loading import load_model

loaded = load_model("path/to/this/folder")  # or a Hub repo id, optionally revision="<commit>"
loaded.model, loaded.tokenizer  # TransformerClassifier in eval mode, tokenizers.Tokenizer
```

Plain `TransformerClassifier.from_pretrained(folder_or_repo_id)` loads the weights alone; the tokenizer is
`tokenizers.Tokenizer.from_file("tokenizer.json")`. Label ids: {label_ids}.

## Limitations

- Trained only on short English film-review snippets (Rotten Tomatoes, 2000s); other domains, long
  reviews, sarcasm and non-English text are out of distribution.
- It leans on individual words more than on how they combine: negation ("not bad") and contrast
  ("great cast, dull plot") are often misread.
- Words outside the training vocabulary are split into pieces or become `[UNK]` (emoji, for example),
  so they carry little sentiment.
- Small and trained from scratch: it is a teaching model for looking at attention, not a production
  sentiment classifier; a fine-tuned pretrained model is far more accurate.
"""


def describe_recipe(metrics: dict) -> str:
    """The training recipe in words, from the command-line arguments recorded in metrics.json."""
    a = metrics["arguments"]
    recipe = (
        f"AdamW (peak learning rate {a['lr']}, weight decay {a['weight_decay']}), batch {a['batch_size']}, "
        f"{a['epochs']} epochs with linear warm-up ({a['warmup']:.0%}) and cosine decay, label smoothing "
        f"{a['label_smoothing']}, dropout {a['dropout']}, word dropout {a['word_dropout']} (tokens replaced by `[UNK]`)"
    )
    if a["ema_decay"]:
        recipe += f", weights averaged with an exponential moving average (decay {a['ema_decay']})"
    if a["teachers"]:
        seeds = f"{a['seed'] + 1}-{a['seed'] + a['teachers']}"
        recipe += (
            f"; distilled from an ensemble of {a['teachers']} teacher models of the same shape "
            f"({a['teacher_epochs']} epochs each, seeds {seeds}): targets = {1 - a['distill_weight']:.2g} × true "
            f"label + {a['distill_weight']:.2g} × mean teacher prediction"
        )
    return recipe


def render_model_card(model: TransformerClassifier, metrics: dict) -> str:
    """The model card text: YAML metadata (with model-index results) and a body built from ``metrics``.

    ``metrics`` is what ``transformer.train`` writes to metrics.json, plus ``config`` keys read from the model.
    """
    config = model._hub_mixin_config
    data = metrics["data"]
    results = [
        EvalResult(
            task_type="text-classification",
            dataset_type="glue" if split == "validation" else "sst2",
            dataset_name=name,
            dataset_config="sst2" if split == "validation" else None,
            dataset_split=split,
            metric_type="accuracy",
            metric_value=metrics[key],
        )
        for name, split, key in [
            ("GLUE SST-2", "validation", "dev_accuracy"),
            ("SST-2 (sentence-level test)", "test", "test_accuracy"),
        ]
    ]
    card_data = ModelCardData(
        language="en",
        license="mit",
        library_name="pytorch",
        pipeline_tag="text-classification",
        datasets=["glue", "stanfordnlp/sst2"],
        metrics=["accuracy"],
        tags=["transformer-attention-explorer", "sentiment-analysis", "pytorch_model_hub_mixin"],
        model_name="transformer-attention-explorer-sst2",
        eval_results=results,
    )
    body = BODY.format(
        **{k: config[k] for k in ("vocab_size", "num_layers", "d_model", "num_heads", "d_ff", "dropout", "max_len")},
        labels=" / ".join(model.label_names),
        label_ids=", ".join(f"{i} = {name}" for i, name in enumerate(model.label_names)),
        parameters=sum(p.numel() for p in model.parameters()),
        dev_file=data["dev"],
        test_file=data["test"],
        train_file=data["train"],
        dev_n=metrics["dev_rows"],
        test_n=metrics["test_rows"],
        epochs=len(metrics["history"]),
        recipe=describe_recipe(metrics),
        **{k: metrics[k] for k in ("dev_accuracy", "test_accuracy", "train_rows", "best_epoch", "train_seconds")},
        **{k: metrics[k] for k in ("device", "seed", "command")},
    )
    return f"---\n{card_data.to_yaml()}\n---\n{body}"
