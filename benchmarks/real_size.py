"""The explorer at real size: every endpoint's handler work and peak memory on random checkpoints with
DistilBERT-base's and BERT-base's shapes, each beside the bare ``transformers`` model doing the same passes.

The checkpoints are built here (no download): ``DistilBertConfig()`` and ``BertConfig()`` as they come (6 or 12
layers × 12 heads × 768 wide, feed-forward 3,072, vocabulary 30,522, 512 positions), random weights, saved and read
back with ``load_model`` as the app reads ``MODEL_ID``. The tokenizer is BERT's WordPiece set-up (lowercase, [CLS]
$A [SEP]) over a vocabulary laid out from words of the data: the bundled tokenizer's 16,000 pieces, learnt from
the training text. Each endpoint is called as the API calls it (``api.endpoints``, answer as JSON) on a text
of exactly 128 or 512 tokens; the Attention tab is the page's main handler (analysis, then the heatmap).

The floors run the bare ``transformers`` model (the same object, eager attention, which the explorer needs for
its weights), on the same thread, interleaved round by round with the endpoints:

- a forward pass, for ``/predict``; a forward pass returning every attention, for the Attention tab and the views
  drawn from one pass (``/attention``, ``/rollout``, ``/knockout``);
- 32 forward and backward passes with respect to the word embeddings, batched, for ``/attributions``;
- 73 forward passes (1 + 72 heads; 145 on BERT-base), batched, for ``/head_importance``.

Batched floors run in the passes ``transformer.explain.batching`` cuts (one batch where it fits the memory budget),
so they hold the memory the explorer holds. Each call's wall time and CPU time (this process's) are kept; ratios
and targets are on CPU time, the work done, which a machine shared with other jobs inflates far less than wall
time. Peak memory is the process's VmHWM during the call (reset before it, Linux only), the model included. One
torch thread, as the app sets it. Targets (issue 37, DistilBERT-base, 128 tokens): ``/predict`` <= 1.5x its floor
+ 0.15 s; ``/attributions`` and ``/head_importance`` <= 1.3x theirs + 0.3 s; at 512 tokens, every endpoint's default
answer <= 8 MB and one head's ``/attention`` <= 3 MB (``answer_sizes``). Each model's first calls, at 16 tokens, are
untimed. Example::

    HF_HUB_OFFLINE=1 nice -n 10 python -m benchmarks.real_size --models distilbert --lengths 128 --rounds 3
"""

import argparse
import json
import math
import multiprocessing
import os
import statistics
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import torch
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

from transformer.explain.batching import passes_for
from transformer.loading import DEFAULT_MODEL_DIR

from . import answer_sizes
from .browser import FILLER
from .timing import measure, median_ms

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]  # ids 0 .. 4: [PAD] = 0, the configs' pad_token_id
IG_PASSES = 32
WARM_UP_TOKENS = 16
# endpoint: (its arguments after the text, its floor); a floor of None has none
ENDPOINTS = {
    "predict": ({}, "forward"),
    "attention tab": ({}, "forward, attentions"),
    "attention": ({"layer": 1}, "forward, attentions"),  # one layer: every head of a big model is over 8 MB
    "rollout": ({"layer": 1}, "forward, attentions"),  # one layer: every layer at 512 tokens is over 8 MB
    "knockout": ({"heads_off": ["L1 H1"], "layer": 1}, "forward, attentions"),
    "attributions": ({"steps": IG_PASSES}, "IG"),
    "head_importance": ({}, "knockouts"),
    "faithfulness": ({}, None),
}
QUICK = ("predict", "attention tab", "attributions", "head_importance")  # what make bench times at 512 tokens
TARGETED = ("distilbert", 128)  # the targets are set for DistilBERT-base at 128 tokens
SIZES_TARGETED = ("distilbert", 512)  # and the answer sizes at 512 tokens (``answer_sizes``)
TARGETS = {"predict": (1.5, 0.15), "attributions": (1.3, 0.3), "head_importance": (1.3, 0.3)}  # (× floor, + s)


def data_wordpiece() -> Tokenizer:
    """BERT's WordPiece set-up over the bundled tokenizer's pieces (learnt from the data), BERT's specials first."""
    pieces = Tokenizer.from_file(str(DEFAULT_MODEL_DIR / "tokenizer.json")).get_vocab()
    words = [piece for piece, _ in sorted(pieces.items(), key=lambda item: item[1]) if not piece.startswith("[")]
    vocab = {token: i for i, token in enumerate([*SPECIALS, *words])}
    tokenizer = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer, tokenizer.decoder = pre_tokenizers.BertPreTokenizer(), decoders.WordPiece()
    tokenizer.add_special_tokens(SPECIALS)
    cls, sep = vocab["[CLS]"], vocab["[SEP]"]
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", cls), ("[SEP]", sep)]
    )
    return tokenizer


def write_checkpoint(folder: Path, family: str) -> Path:
    """A random ``family`` ("distilbert" or "bert") classifier of its base size, with ``data_wordpiece``: ``folder``."""
    import transformers

    config_class = transformers.DistilBertConfig if family == "distilbert" else transformers.BertConfig
    config = config_class(id2label={0: "negative", 1: "positive"}, label2id={"negative": 0, "positive": 1})
    torch.manual_seed(0)
    transformers.AutoModelForSequenceClassification.from_config(config).save_pretrained(folder)
    data_wordpiece().save(str(folder / "tokenizer.json"))
    return folder


def build_in_child(folder: Path, family: str) -> Path:
    """``write_checkpoint`` in a spawned child process, so that this one holds nothing the build left resident."""
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as builder:
        return builder.submit(write_checkpoint, folder, family).result()


def text_of(tokenizer: Tokenizer, tokens: int) -> str:
    """A text the tokenizer reads as exactly ``tokens`` tokens, [CLS] and [SEP] included."""
    words = ["good", *(FILLER[i % len(FILLER)] for i in range(tokens - 3))]
    text = " ".join(words)
    assert len(tokenizer.encode(text).ids) == tokens, "each filler word is one piece of the bundled vocabulary"
    return text


def floors(model, ids: torch.Tensor) -> dict:
    """The bare ``transformers`` model's passes for one sentence (see the module's docstring).

    Shape:
        ids: (1, N).
    """
    hf, n = model.hf_model, ids.size(1)
    knockout_rows = 1 + model.num_layers * model.num_heads

    @torch.no_grad()
    def forward(attentions: bool = False):
        return hf(input_ids=ids, output_attentions=attentions).logits

    @torch.no_grad()
    def knockouts():
        return [
            hf(input_ids=ids.expand(r.stop - r.start, -1)).logits for r in passes_for(model, knockout_rows, n, False)
        ]

    def integrated_gradients():
        embeds = hf.get_input_embeddings()(ids).detach()  # (1, N, D)
        for r in passes_for(model, IG_PASSES, n, True):
            batch = embeds.expand(r.stop - r.start, -1, -1).clone().requires_grad_()  # (K, N, D)
            torch.autograd.grad(hf(inputs_embeds=batch).logits[:, 0].sum(), batch)

    return {
        "forward": forward,
        "forward, attentions": lambda: forward(True),
        "IG": integrated_gradients,
        "knockouts": knockouts,
    }


def peak_mb() -> float:
    """The process's peak resident memory since the last ``reset_peak``, in MB (VmHWM)."""
    line = next(x for x in Path("/proc/self/status").read_text().splitlines() if x.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024


def reset_peak() -> None:
    """Start VmHWM again from the current resident memory (``clear_refs`` 5, Linux)."""
    Path("/proc/self/clear_refs").write_text("5")


@dataclass
class Record:
    """What each call of one candidate used: CPU seconds (this process, all threads), peak MB, answer bytes."""

    cpu: list[float] = field(default_factory=list)
    peaks: list[float] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)


def recorded(fn, record: Record):
    """``fn`` wrapped: each call adds its CPU time, its peak memory and, for an answer, its size as JSON."""

    def call():
        reset_peak()
        start = time.process_time()
        answer = fn()
        record.cpu.append(time.process_time() - start)
        record.peaks.append(peak_mb())
        if isinstance(answer, dict):
            record.sizes.append(len(json.dumps(answer)))

    return call


def endpoint_calls(text: str, names) -> dict:
    """Each endpoint as the API calls it, the Attention tab as the page's main handler does, on ``text``."""
    from transformer.explorer import runner
    from transformer.explorer.page import api
    from transformer.explorer.registry import Registry
    from transformer.explorer.views import VIEWS

    from .hub_model import handler_work

    served = api.endpoints(Registry(VIEWS))
    calls = {}
    for name in names:
        if name == "attention tab":
            calls[name] = lambda: handler_work(runner.get_model()[0], text)
        else:
            arguments = ENDPOINTS[name][0]
            calls[name] = lambda fn=served[name], kw=arguments: fn(text, **kw)
    return calls


def measure_model(family: str, folder: Path, lengths: tuple[int, ...], rounds: int, names: dict) -> list[str]:
    """The table for one checkpoint: each endpoint and floor at each length, interleaved, with peaks and sizes."""
    from transformer.explorer import runner

    os.environ["MODEL_ID"] = str(folder)
    runner.JOB_SECONDS = math.inf  # a real-size job runs past the Space's default cap: time it whole
    runner.get_model.cache_clear()
    start = time.perf_counter()
    loaded = runner.get_model()[0]
    model, tokenizer = loaded.model, loaded.tokenizer
    lines = [
        f"{family}: {model.num_layers} layers x {model.num_heads} heads x {model.d_model}, "
        f"{sum(p.numel() for p in model.parameters()) / 1e6:.0f}M parameters, loaded in "
        f"{time.perf_counter() - start:.1f} s, resident {peak_mb():.0f} MB peak so far",
        f"{'tokens':>6} {'what':<22} {'wall s':>8} {'CPU s':>8} {'floor':>8} {'ratio':>6} {'peak MB':>8} {'answer':>9}"
        "  target",
    ]
    every_name = dict.fromkeys(name for chosen in names.values() for name in chosen)
    for fn in endpoint_calls(text_of(tokenizer, WARM_UP_TOKENS), every_name).values():
        fn()  # untimed: the first call of each pays for lazy imports and first allocations
    for tokens in lengths:
        text = text_of(tokenizer, tokens)
        bare = floors(model, torch.tensor([tokenizer.encode(text).ids], device=loaded.device))
        chosen = names[tokens]
        used_floors = sorted({ENDPOINTS[name][1] for name in chosen} - {None})
        calls = {**endpoint_calls(text, chosen), **{name: bare[name] for name in used_floors}}
        records = {name: Record() for name in calls}
        wall = measure({name: recorded(fn, records[name]) for name, fn in calls.items()}, rounds, warmup=0)
        targeted = (family, tokens) == TARGETED
        lines += [row(tokens, name, wall[name], records, targeted) for name in calls]
        if (family, tokens) == SIZES_TARGETED:
            lines += answer_sizes.size_lines(text)
    return lines


def row(tokens: int, name: str, wall: list[float], records: dict[str, Record], targeted: bool) -> str:
    """One line of the table: wall and CPU time, the floor's CPU time and the ratio, peak memory, answer size, and,
    where ``targeted``, the target (on CPU time: the work, whatever else the machine runs)."""
    record, floor = records[name], ENDPOINTS.get(name, (None, None))[1]
    cpu = statistics.median(record.cpu)
    floor_cpu = statistics.median(records[floor].cpu) if floor else None
    verdict = ""
    if targeted and name in TARGETS and floor_cpu:
        factor, extra = TARGETS[name]
        limit = factor * floor_cpu + extra
        verdict = f"<= {factor}x floor + {extra} s = {limit:.2f} s: {'met' if cpu <= limit else 'MISSED'}"
    floor_text = f"{floor_cpu:8.2f} {cpu / floor_cpu:5.2f}x" if floor_cpu else f"{'':>8} {'':>6}"
    answer = f"{max(record.sizes) / 1e6:7.2f}MB" if record.sizes else ""
    return (
        f"{tokens:>6} {name:<22} {median_ms(wall) / 1000:8.2f} {cpu:8.2f} {floor_text} {max(record.peaks):8.0f} "
        f"{answer:>9}  {verdict}"
    )


def run(
    families: tuple[str, ...] = ("distilbert", "bert"),
    lengths: tuple[int, ...] = (128, 512),
    rounds: int = 1,
    endpoints: tuple[str, ...] | None = None,
) -> list[str]:
    """The table for each family: ``endpoints`` at every length, or by default every endpoint at 128 tokens and
    ``QUICK`` at 512; one round each unless ``rounds`` says more."""
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    torch.set_num_threads(1)
    names = {n: endpoints or (tuple(ENDPOINTS) if n <= 128 else QUICK) for n in lengths}
    lines = [
        f"torch {torch.__version__}, 1 thread; medians of {rounds} interleaved round(s): wall time, CPU time of this "
        "process, the floor's CPU time and the ratio of the two; peak = VmHWM during the call"
    ]
    for family in families:
        with tempfile.TemporaryDirectory() as folder:
            # built in another process, so this one's peak memory holds only what the app would hold
            lines += measure_model(family, build_in_child(Path(folder), family), lengths, rounds, names)
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="distilbert,bert", help="comma-separated: distilbert, bert")
    parser.add_argument("--lengths", default="128,512", help="comma-separated token counts")
    parser.add_argument("--rounds", type=int, default=1, help="interleaved rounds (medians of these)")
    parser.add_argument("--endpoints", help=f"comma-separated, of: {', '.join(ENDPOINTS)} (default: see run)")
    args = parser.parse_args()
    lengths = tuple(int(n) for n in args.lengths.split(","))
    endpoints = tuple(args.endpoints.split(",")) if args.endpoints else None
    print("\n".join(run(tuple(args.models.split(",")), lengths, args.rounds, endpoints)))


if __name__ == "__main__":
    main()
