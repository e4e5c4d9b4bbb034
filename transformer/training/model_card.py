"""The Hugging Face model card (README.md) written beside a trained checkpoint."""

from huggingface_hub import EvalResult, ModelCardData

from ..classifier import TransformerClassifier
from .card_targets import describe_targets
from .probe import frames_outside

# Every data set the recipe reads, with its licence and citation (from ../shared/data/README.md).
DATASETS = [
    ("sst2", "Stanford Sentiment Treebank, binary (GLUE SST-2)", "GLUE SST-2 terms (research use)",
     "Socher et al. 2013, Recursive Deep Models for Semantic Compositionality Over a Sentiment Treebank, EMNLP"),
    ("yelp", "Yelp review sentences (Shen et al. 2017)", "Apache-2.0 (repository); Yelp dataset terms may apply",
     "Shen, Lei, Barzilay and Jaakkola 2017, Style Transfer from Non-Parallel Text by Cross-Alignment, NIPS"),
    ("pros_cons", "Product pros and cons (Ganapathibhotla & Liu 2008)", "CC BY 4.0 (Bing Liu)",
     "Ganapathibhotla and Liu 2008, Mining Opinions in Comparative Sentences, COLING"),
    ("tweets", "Sentiment140 sample, labels from emoticons", "none stated; the authors ask for a citation",
     "Go, Bhayani and Huang 2009, Twitter Sentiment Classification using Distant Supervision, Stanford CS224N"),
    ("imdb", "Large Movie Review Dataset v1.0 (labelled and unlabelled reviews)",
     "none stated; the authors ask for a citation",
     "Maas et al. 2011, Learning Word Vectors for Sentiment Analysis, ACL-HLT"),
    ("multi_domain", "Multi-Domain Sentiment Dataset (books, dvd, electronics, kitchen)", "none stated",
     "Blitzer, Dredze and Pereira 2007, Biographies, Bollywood, Boom-boxes and Blenders, ACL"),
    ("lexicon", "Hu & Liu opinion lexicon", "CC BY 4.0 (Bing Liu)",
     "Hu and Liu 2004, Mining and Summarizing Customer Reviews, KDD"),
    ("cad", "Counterfactually-augmented IMDb reviews: each beside a human edit that flips its label", "Apache-2.0",
     "Kaushik, Hovy and Lipton 2020, Learning the Difference that Makes a Difference with "
     "Counterfactually-Augmented Data, ICLR"),
    ("neutral", "SST-5 neutral sentences and TweetEval neutral tweets, soft target P(positive) = 0.5",
     "SST: as SST-2; TweetEval: none stated (Twitter terms)",
     "Socher et al. 2013 (SST); Barbieri et al. 2020, TweetEval, Findings of EMNLP"),
    ("negation", "SST-2, Yelp and pros/cons sentences negated (label flipped), made by this project",
     "as its sources", "this project (2026), `transformer/training/composition.py`"),
    ("expectation", "the same sentences as expectations met or denied (\"i thought X would be Y , but ...\")",
     "as its sources", "this project (2026), `transformer/training/composition.py`"),
    ("contrast", "two of those sentences joined by but / although / however: the main clause's label",
     "as its sources", "this project (2026), `transformer/training/composition.py`"),
    ("negated_praise", "the positive SST-2, Yelp, pros/cons and tweet rows that hold a negation word",
     "as its sources", "this project (2026), `transformer/training/composition.py`"),
    ("composed", "the SST-2, Yelp, pros/cons and tweet rows of either label with a negation or contrast word",
     "as its sources", "this project (2026), `transformer/training/composition.py`"),
    ("identity", "real sentences with the identity term swapped, or framed by one (label kept)",
     "as its sources", "this project (2026), `transformer/training/identity.py`"),
    ("neutral_people", "statements about people with no opinion (identity terms, names, places), target 0.5",
     "MIT (this project)", "this project (2026), `transformer/training/neutral.py`"),
    ("nuisance", "real sentences with a name, place or number swapped, a URL, handle, hashtag or emoji added, "
     "or a typo in the opinion word (label kept)", "as its sources", "this project (2026), "
     "`transformer/training/nuisance.py`"),
    ("verbs", "opinion verbs stated, negated or denied in this project's frames (\"i did n't hate the pasta\")",
     "MIT (this project)", "this project (2026), `transformer/training/verbs.py`"),
    ("negation_pairs", "SST-2, Yelp and pros/cons clauses, each beside one negated copy (label flipped), read as "
     "pairs", "as its sources", "this project (2026), `transformer/training/composition.py`"),
]  # fmt: skip

SET_NAMES = {
    "sst2": "SST-2",
    "yelp": "Yelp sentences",
    "pros_cons": "pros/cons",
    "tweets": "tweets",
    "imdb": "IMDB",
    "multi_domain": "multi-domain Amazon",
    "ood": "hand-written reviews (`benchmarks/ood_reviews.tsv`)",
    "everyday": "everyday sentences (`benchmarks/everyday_sentences.tsv`)",
    "cad": "CAD dev (originals and edits)",
    "mean": "**mean (the selection score)**",
}

BODY = """
# Transformer Attention Explorer: sentiment classifier

A small Transformer encoder trained **from scratch** (no pretrained weights) on film, product, restaurant
and social-media text. It is the model behind the Transformer Attention Explorer demo; the architecture is
the one of the tutorial "Getting Started with Transformers in PyTorch".

## Accuracy

Selection sets (the student's epoch with the best mean was kept):

| set | rows | accuracy |
| --- | ---: | ---: |
{dev_rows}

Test sets, scored once on the kept epoch:

| set | rows | accuracy |
| --- | ---: | ---: |
{test_rows}

Reviews longer than {max_len} tokens (IMDB, Amazon) are read in {max_len}-token chunks and the chunks'
probabilities averaged. The held-out IMDB reviews are the first {imdb_dev_rows} of `imdb/train`.

## Architecture

WordPiece tokens ({vocab_size} entries) → embedding{scaled} + sinusoidal positions →
{num_layers} Pre-LN encoder blocks (d_model {d_model}, {num_heads} heads, feed-forward {d_ff}, GELU,
dropout {dropout}) → LayerNorm → mean over the real tokens → head (Linear → {activation} → Dropout → Linear)
→ {labels}.
{parameters:,} parameters. Inputs longer than {max_len} tokens are cut (the app) or chunked (evaluation).

The tokenizer's normaliser (saved in `tokenizer.json`) maps raw text, SST's treebank style and Yelp's
tokenised text to the same form: lowercase, accents stripped, curly and treebank quotes to `"`,
`-lrb-`/`-rrb-` to brackets, Yelp's `_num_` to a number, and clitics split the treebank way
(`don't`, `dont` → `do n't`; `it's` → `it 's`). Token offsets point into the raw input.

## Training data

| source | what | licence | citation | examples |
| --- | --- | --- | --- | ---: |
{data_rows}

Examples are counted after chunking; an epoch draws weight × examples from each source
(weights: {weights}). The lexicon contributes each word with its label and `not <word>` with the other.
The last five sources are made from the real sentences when training starts (seeded): rewrites that
teach negation, denied expectations and contrast, the real positive sentences that hold a negation
word (drawn again), and identity swaps and frames that teach that an identity term does not decide the label.
The tokenizer and the pre-training also read the 48,801 unlabelled IMDB reviews (`imdb/unsup`).

## Training procedure

{recipe}

Best epoch: {best_epoch} of {epochs}. Training took {train_seconds:.0f} s on {device}, seed {seed}.
Exact command (run from the repository root):

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

## Bias, risks and limitations

{behaviour}

- English only, and the text it learned from is reviews and tweets from before 2013: newer slang, other
  domains, sarcasm and irony are out of distribution.
- Emoji and other scripts are read as `[UNK]` and carry no sentiment.
- Sentences with no opinion were trained towards P(positive) = 0.5, and 95 % of the real ones are tweets
  about news, sport and events: such topics may pull a text towards the middle even where it holds an
  opinion. A reading near 0.5 means "not sure"; the model has no neutral class.
- Identity figures above use the suite's few test terms (two or three per group, none seen in training);
  other terms, and statements that mix an identity with an opinion, can still move the prediction.
- Small and trained from scratch: it is a teaching model for looking at attention, not a production
  sentiment classifier; a fine-tuned pretrained model is far more accurate.
"""


def _rates_row(label: str, rates: list[float]) -> str:
    """A table row: ``label``, then each rate as a percentage."""
    return f"| {label} | " + " | ".join(f"{rate:.1%}" for rate in rates) + " |"


def describe_behaviour(metrics: dict) -> str:
    """The behavioural suite's figures (``python -m transformer.behaviour``) and the composition scores."""
    behaviour, composition = metrics.get("behaviour"), metrics.get("composition")
    if not behaviour:
        return "This run did not record the behavioural suite (`python -m transformer.behaviour` measures it)."
    parts = list(behaviour)
    capabilities = behaviour[parts[0]]["capabilities"]
    lines = [
        "The project's behavioural suite (`python -m transformer.behaviour`; templates and words of its own, a "
        "selection part and a test part that share neither), failure rate per capability:",
        "",
        "| capability | " + " | ".join(parts) + " |",
        "| --- |" + " ---: |" * len(parts),
    ]
    lines += [_rates_row(name, [behaviour[p]["capabilities"][name] for p in parts]) for name in capabilities]
    invariances = [name for name in behaviour[parts[0]]["tests"] if name.startswith("robustness: ")]
    lines += [
        "",
        "Invariance: the share of cases whose class changes when only this changes:",
        "",
        "| change | " + " | ".join(parts) + " |",
        "| --- |" + " ---: |" * len(parts),
        *(
            _rates_row(name.removeprefix("robustness: "), [behaviour[p]["tests"][name] for p in parts])
            for name in invariances
        ),
        "",
        "Identity: swapping a term for another of its group (race, religion, gender, sexuality, nationality, "
        "disability, age) in neutral, positive and negative templates:",
        "",
        "| part | templates | swaps that change the class | median spread of P(positive) |",
        "| --- | --- | ---: | ---: |",
    ]
    for part in parts:
        for scope, figures in (
            ("all", behaviour[part]["identity"]),
            ("neutral", behaviour[part]["identity"]["neutral"]),
        ):
            lines.append(f"| {part} | {scope} | {figures['swap_changes_class']:.1%} | {figures['median_spread']:.3f} |")
    neutral = behaviour[parts[-1]]["identity"]["neutral"]
    if "by_group" in neutral:  # recorded since the suite measured it
        lines += [
            "",
            f"Neutral templates of the {parts[-1]} part, per group: the median spread of P(positive) across the "
            "group's terms, and the share of texts read as a clear opinion (outside [0.25, 0.75]):",
            "",
            "| group | median spread | clear opinion |",
            "| --- | ---: | ---: |",
            *(
                f"| {group} | {figures['median_spread']:.3f} | {figures['clear_opinion']:.1%} |"
                for group, figures in [("all", neutral), *neutral["by_group"].items()]
            ),
        ]
    for source, figures in metrics.get("neutral", {}).items():
        lines.append(
            f"\n`neutral/dev` ({source}, {figures['n']} sentences with no opinion): median P(positive) "
            f"{figures['median']:.2f}, {figures['clear_opinion']:.1%} read as a clear opinion."
        )
    if composition:
        pooled, cad = composition["negation"].get("pooled", {}), composition.get("cad", {})
        lines += [
            "",
            f"On the selection sets: accuracy {pooled.get('accuracy')} on the {pooled.get('n')} rows with a "
            f"negation word, {pooled.get('positive_accuracy')} on the {pooled.get('positives')} positive ones; "
            f"CAD dev: originals {cad.get('originals')}, edits {cad.get('edits')}, pair consistency "
            f"{cad.get('pair_consistency')}.",
        ]
    return "\n".join(lines)


def describe_probe(metrics: dict) -> str:
    """The held-out probe's figures (``python -m transformer.probe``), where metrics.json has them."""
    probe = metrics.get("probe")
    if not probe:
        return ""
    lines = [
        "",
        "",
        "The held-out probe (`python -m transformer.probe`): eight neutral frames of its own, each with every identity "
        "term; every word list (identity terms, names, places) is split in two by a hash, and the training's rewrites "
        "write only the training half, so the other half measures words the training never named:",
        "",
        "| identity terms | terms | median spread of P(positive) | read as a clear opinion |",
        "| --- | ---: | ---: | ---: |",
    ]
    for half, label in (("training", "training half"), ("held_out", "held-out half")):
        figures = probe["identity"][half]
        lines.append(
            f"| {label} | {figures['terms']} | {figures['median_spread']:.3f} | {figures['clear_opinion']:.1%} |"
        )
    if probe.get("trained_before_the_split"):
        lines += [
            "",
            "This model was trained before the split: its rewrites wrote both halves, so they read alike here.",
        ]
    outside = frames_outside(probe["frame_means"])
    named = "; ".join(f'"{frame}" {mean:.3f}' for frame, mean in outside.items())
    invariance = probe["invariance"]
    lines += [
        "",
        f"Frames whose mean P(positive) over the terms falls outside [0.35, 0.65]: {len(outside)} of "
        f"{len(probe['frame_means'])}{': ' + named if named else ''}. Opinions whose class changes when only this "
        f"changes: a held-out name {invariance['names']['held_out']:.1%}, a held-out place "
        f"{invariance['places']['held_out']:.1%}, a number {invariance['numbers']:.1%}. Cases that fail: a change "
        f'of mind over time ("used to ... but now") {probe["temporal"]:.1%}, who holds the opinion '
        f"{probe['holder']:.1%}.",
    ]
    return "\n".join(lines)


def describe_recipe(metrics: dict) -> str:
    """The training recipe in words, from the command-line arguments recorded in metrics.json."""
    a = metrics["arguments"]
    lines = []
    if a["pretrain_epochs"]:
        lines.append(
            f"- Masked-language-model pre-training of the encoder: {a['pretrain_epochs']} epoch(s) of "
            f"{a['pretrain_windows']:,} random {a['max_len']}-token windows of the training and unlabelled text, "
            f"{a['mask_rate']:.0%} of tokens predicted (BERT's 80/10/10 corruption), peak learning rate "
            f"{a['pretrain_lr']}."
        )
    common = (
        f"AdamW (peak learning rate {a['lr']}, weight decay {a['weight_decay']}), batch {a['batch_size']}, "
        f"linear warm-up ({a['warmup']:.0%}) and cosine decay, label smoothing {a['label_smoothing']}, "
        f"word dropout {a['word_dropout']} (tokens replaced by `[UNK]`)"
    )
    scale = a.get("embedding_lr_scale", 1.0)  # older metrics.json files predate the flag
    if scale != 1:
        common += f", the token embedding table at {scale:g} × the learning rate and weight decay / {scale:g}"
    if a["ema_decay"]:
        common += f", weights averaged with an exponential moving average (decay {a['ema_decay']})"
    if a.get("pair_weight"):  # older metrics.json files predate the flag
        common += (
            f", a hinge between each CAD review and its edit, and each clause and its negation when drawn (weight "
            f"{a['pair_weight']:g}): the positive side must outscore its twin by {a['pair_margin']:g} logits"
        )
    if a.get("pairing_weight"):  # older metrics.json files predate the flag
        common += (
            f", counterfactual logit pairing (weight {a['pairing_weight']:g}): the gap between a sentence's logits "
            "and a copy's whose identity term, name, place, number, URL, handle or non-opinion word was changed"
        )
    if a["teachers"]:
        lines.append(
            f"- {a['teachers']} teacher classifiers fine-tuned from the pre-trained encoder on the true labels, "
            f"{a['teacher_epochs']} epoch(s) each (seeds {a['seed'] + 1}–{a['seed'] + a['teachers']})."
        )
        lines.append(
            f"- The student, fine-tuned from the same encoder for {a['epochs']} epochs on targets = "
            f"{1 - a['distill_weight']:.2g} × true label + {a['distill_weight']:.2g} × mean teacher prediction."
        )
    else:
        lines.append(f"- The classifier, fine-tuned for {a['epochs']} epochs on the true labels.")
    lines.append(f"- Every classifier: {common}.")
    return "\n".join(lines)


def score_rows(scores: dict, rows: dict) -> str:
    return "\n".join(f"| {SET_NAMES.get(k, k)} | {rows.get(k, '')} | {v:.4f} |" for k, v in scores.items())


def render_model_card(model: TransformerClassifier, metrics: dict) -> str:
    """The model card text: YAML metadata (with model-index results) and a body built from ``metrics``.

    ``metrics`` is what ``transformer.train`` writes to metrics.json.
    """
    config = model._hub_mixin_config
    results = [
        EvalResult(
            task_type="text-classification",
            dataset_type=name,
            dataset_name=f"{SET_NAMES.get(name, name)} ({split})",
            dataset_split=split,
            metric_type="accuracy",
            metric_value=value,
        )
        for split, key in (("validation", "dev"), ("test", "test"))
        for name, value in metrics[key].items()
        if name != "mean"
    ]
    card_data = ModelCardData(
        language="en",
        license="mit",
        library_name="pytorch",
        pipeline_tag="text-classification",
        datasets=["stanfordnlp/sst2", "stanfordnlp/imdb", "yelp", "sentiment140", "amazon_multi_domain"],
        metrics=["accuracy"],
        tags=["transformer-attention-explorer", "sentiment-analysis", "pytorch_model_hub_mixin"],
        model_name="transformer-attention-explorer-sentiment",
        eval_results=results,
    )
    counts, arguments = metrics["train_examples"], metrics["arguments"]
    body = BODY.format(
        **{k: config[k] for k in ("vocab_size", "num_layers", "d_model", "num_heads", "d_ff", "dropout", "max_len")},
        scaled=" (scaled by √d)" if model.embedding_scale else "",
        activation=model.head_activation.upper() if model.head_activation == "gelu" else "ReLU",
        labels=" / ".join(model.label_names),
        label_ids=", ".join(f"{i} = {name}" for i, name in enumerate(model.label_names)),
        parameters=sum(p.numel() for p in model.parameters()),
        dev_rows=score_rows(metrics["dev"], metrics["dev_rows"]),
        test_rows=score_rows(metrics["test"], metrics["test_rows"]),
        data_rows="\n".join(
            f"| {key} | {what} | {licence} | {citation} | {counts[key]:,} |"
            for key, what, licence, citation in DATASETS
            if key in counts  # older metrics.json files predate a source
        ),
        weights=", ".join(arguments["source_weights"]),
        imdb_dev_rows=arguments["imdb_dev_rows"],
        epochs=len(metrics["history"]),
        recipe=describe_recipe(metrics),
        behaviour=describe_behaviour(metrics) + describe_probe(metrics) + describe_targets(metrics),
        **{k: metrics[k] for k in ("best_epoch", "train_seconds", "device", "seed", "command")},
    )
    return f"---\n{card_data.to_yaml()}\n---\n{body}"
