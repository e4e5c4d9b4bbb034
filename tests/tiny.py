"""The tiny, seeded, dropout-free classifier that the model and explanation tests build in milliseconds, and a tiny
data folder of the four dev sets the corpus views read."""

import gzip
from pathlib import Path

import torch

from transformer import TransformerClassifier

TINY_CONFIG = dict(
    vocab_size=50, num_classes=2, d_model=16, num_heads=2, num_layers=2, d_ff=32, max_len=32, dropout=0.0
)


def tiny_model(seed: int = 0, **overrides) -> TransformerClassifier:
    """A ``TransformerClassifier`` of ``TINY_CONFIG`` (updated by ``overrides``), seeded, in eval mode."""
    torch.manual_seed(seed)
    return TransformerClassifier(**(TINY_CONFIG | overrides)).eval()


def write_gz(path: Path, rows) -> None:
    """A gzip TSV of (text, label) rows, with its header, as the data folder keeps its dev sets."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8") as file:
        file.write("text\tlabel\n" + "".join(f"{text}\t{label}\n" for text, label in rows))


def write_dev_sets(folder: Path) -> Path:
    """A data folder with the four dev sets, a few rows each (markup in some texts); ``folder``."""
    (folder / "sst2").mkdir(parents=True)
    sst = ["a charming and often affecting journey .", "the movie is n't funny", "a wonderful film", "dull"]
    (folder / "sst2" / "glue_dev.tsv").write_text(
        "sentence\tlabel\n" + "".join(f"{text}\t{i % 2}\n" for i, text in enumerate(sst)), encoding="utf-8"
    )
    for name in ("yelp", "pros_cons", "tweets"):
        write_gz(folder / name / "dev.tsv.gz", [(f"the {name} was great , <b>really</b> {i}", i % 2) for i in range(5)])
    return folder


def write_checkpointed_model(folder: Path, tokenizer, steps=(0, 4, 9), **overrides) -> Path:
    """A model folder as ``transformer.train --keep-steps`` leaves it: the model (seed 0, trained no further) and
    a float16 checkpoint per earlier step of ``steps``, each a tiny model of its own seed (the step + 1), so every
    checkpoint reads a sentence its own way; the last step is the folder itself. Returns ``folder``."""
    from transformer.training.kept_steps import half_state, write_checkpoints

    config = {"vocab_size": tokenizer.get_vocab_size(), "max_len": 64, "label_names": ["negative", "positive"]}
    final = tiny_model(**(config | overrides))
    final.save_pretrained(folder)
    tokenizer.save(str(folder / "tokenizer.json"))
    states = {step: half_state(tiny_model(step + 1, **(config | overrides))) for step in steps[:-1]}
    write_checkpoints(folder, final, tokenizer, states, final_step=steps[-1], total_steps=steps[-1])
    return folder
