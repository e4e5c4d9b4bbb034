"""A Hub classifier against the bundled model: the main handler's work (read the text, run the model with every
attention, draw the Attention tab's heatmap) at 128 tokens, interleaved in one process.

The BERT is random, built in-process at the bundled model's size (hidden 128, 2 layers, 4 heads, feed-forward 256,
a 16,000-piece vocabulary), with a WordPiece tokenizer trained here that adds [CLS] and [SEP]; it is saved and read
back with ``load_model`` as a Hub checkpoint would be. One torch thread, as the app sets it. Target: its p50 ≤ 1.2×
the bundled model's. Example::

    HF_HUB_OFFLINE=1 python -m benchmarks.hub_model
"""

import json
import tempfile
from pathlib import Path

import torch
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers

from transformer.explorer import analysis
from transformer.explorer.drawing.attention_maps import attention_heatmap
from transformer.loading import DEFAULT_MODEL_DIR, load_model

from .browser import sentence
from .timing import measure, median_ms, p95_ms

TARGET = 1.2
TOKENS = 128


def bert_tokenizer(vocab_size: int) -> Tokenizer:
    """A lowercase WordPiece tokenizer trained on the benchmark's sentences, [CLS] $A [SEP] around each text."""
    tokenizer = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    texts = [sentence(word, TOKENS) for word in ("good", "bad", "fine", "poor")]
    tokenizer.train_from_iterator(texts, trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=specials))
    cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", cls), ("[SEP]", sep)]
    )
    return tokenizer


def write_bert(folder: Path) -> Path:
    """A random BERT classifier of the bundled model's size, saved as a Hub checkpoint in ``folder``."""
    import transformers

    bundled = json.loads((DEFAULT_MODEL_DIR / "config.json").read_text())
    config = transformers.BertConfig(
        vocab_size=bundled["vocab_size"],
        hidden_size=bundled["d_model"],
        num_hidden_layers=bundled["num_layers"],
        num_attention_heads=bundled["num_heads"],
        intermediate_size=bundled["d_ff"],
        max_position_embeddings=bundled["max_len"] + 2,  # room for [CLS] and [SEP] around 128 tokens
        id2label=dict(enumerate(bundled["label_names"])),
        label2id={name: i for i, name in enumerate(bundled["label_names"])},
    )
    torch.manual_seed(0)
    transformers.AutoModelForSequenceClassification.from_config(config).eval().save_pretrained(folder)
    bert_tokenizer(bundled["vocab_size"]).save(str(folder / "tokenizer.json"))
    return folder


def handler_work(loaded, text: str) -> None:
    """What the main handler does for the Attention tab: analyze the text, draw the last layer's mean of heads."""
    result = analysis.analyze(loaded.model, loaded.tokenizer, text)
    attention_heatmap(result.tokens, analysis.attention_matrix(result, -1), "mean of heads")


def run(rounds: int = 20) -> list[str]:
    torch.set_num_threads(1)
    text = sentence("good", TOKENS)
    with tempfile.TemporaryDirectory() as folder:
        loaded_models = {
            "bundled": load_model(DEFAULT_MODEL_DIR, device="cpu"),
            "BERT": load_model(write_bert(Path(folder))),
        }
        candidates = {name: (lambda m=loaded: handler_work(m, text)) for name, loaded in loaded_models.items()}
        times = measure(candidates, rounds=rounds, warmup=3)
    tokens = {name: len(analysis.analyze(m.model, m.tokenizer, text).tokens) for name, m in loaded_models.items()}
    ratio = median_ms(times["BERT"]) / median_ms(times["bundled"])
    lines = [f"{TOKENS}-word sentence, one torch thread, {rounds} interleaved rounds"]
    for name, samples in times.items():
        lines.append(
            f"{name:<8} {tokens[name]:>4} tokens  p50 {median_ms(samples):6.1f} ms  p95 {p95_ms(samples):6.1f} ms"
        )
    met = "met" if ratio <= TARGET else "MISSED"
    lines.append(f"BERT / bundled: {ratio:.2f}x (target <= {TARGET}x), {met}")
    return lines


if __name__ == "__main__":
    print("\n".join(run()))
