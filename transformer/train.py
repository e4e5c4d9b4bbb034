"""Train the sentiment classifier from scratch on a mixture of film, product, restaurant and social text.

The defaults are the recipe of the bundled checkpoint, in five steps:

1. a WordPiece tokenizer learned from all the training text and the unlabelled IMDB reviews;
2. masked-language-model pre-training of the encoder on the same text (``--pretrain-epochs``);
3. ``--teachers`` classifiers fine-tuned from it on the weighted mixture (``--source-weights``);
4. the student, fine-tuned from the same encoder on a mix of the true labels and the teachers' mean
   prediction, with word dropout and an EMA of its weights;
5. test sets scored once, on the student's epoch with the best mean dev accuracy.

Every classifier keeps its epoch with the best mean accuracy over the selection sets (SST-2, Yelp,
pros/cons and tweets dev, held-out IMDB reviews, ``--ood-file``). Each epoch is checkpointed in
``--checkpoint-dir``; ``--resume`` continues an interrupted run and ends with the same files.

Example (the command behind ``assets/model/``, = ``make train``, which keeps 3 checkpoints to keep ``assets/`` small):
    python -m transformer.train --data-dir ../shared/data --output-dir assets/model --threads 1 --keep-steps 3

Quick mode (a tiny model on the first rows of every file, for tests and smoke runs):
    python -m transformer.train --data-dir ../shared/data --output-dir runs/quick --quick

The output folder holds config.json, model.safetensors, tokenizer.json, metrics.json and README.md
(the model card), and the student's kept checkpoints (``--keep-steps``, ``transformer.checkpoints``). It is written
beside ``--output-dir`` and moved into place only when complete. ``--push-to-hub owner/name`` then uploads it
(token from ``HF_TOKEN`` or ``hf auth login``), and each checkpoint as a branch named by its step.
"""

import argparse
import json
import os
import random
import shlex
import shutil
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import torch
from huggingface_hub import HfApi
from tokenizers import Tokenizer
from torch import nn

from .behaviour import build_suite, run_suite, summarise
from .checkpoints import CHECKPOINTS_DIR
from .classifier import HEAD_ACTIVATIONS, TransformerClassifier
from .tokenizer import DEFAULT_VOCAB_SIZE, PAD_ID, train_tokenizer
from .training.composition import opinion_lexicon
from .training.data import LABEL_NAMES, read_labelled
from .training.kept_steps import StepKeeper, ema_horizon, push_checkpoints, write_checkpoints
from .training.loop import Checkpoints, Schedule
from .training.mixture import (
    SOURCES,
    TRAIN_FILES,
    build_mixture,
    chunk,
    parse_weights,
    read_dev_sets,
    read_neutral_dev,
    read_test_sets,
    read_training_sets,
    read_unlabelled,
)
from .training.model_card import render_model_card
from .training.objectives import PairMargin, target_distributions
from .training.pairing import KINDS, build_pairing
from .training.phases import ClassifierTraining, pretrain, teacher_targets, train_classifier
from .training.probe import run_probe
from .training.scoring import composition_scores, neutral_scores, positive_probabilities, score_sets

DEFAULT_WEIGHTS = [
    "sst2=1", "yelp=1", "pros_cons=1", "tweets=1", "imdb=0.5", "multi_domain=1", "lexicon=1",
    "cad=3", "negation=2", "expectation=1", "contrast=0.5", "negated_praise=2", "composed=0.3", "identity=1",
    "neutral=0.5", "neutral_people=2", "nuisance=1", "verbs=1", "negation_pairs=0",
]  # fmt: skip
QUICK = {  # --quick: a tiny model on the first rows of every file, in seconds
    "max_rows": 64, "imdb_dev_rows": 16, "vocab_size": 400, "d_model": 32, "num_heads": 2, "num_layers": 1,
    "d_ff": 64, "max_len": 32, "pretrain_epochs": 1, "pretrain_windows": 256, "teachers": 1, "teacher_epochs": 1,
    "epochs": 2, "batch_size": 16, "ema_decay": 0.9,  # a few dozen steps: a short average
}  # fmt: skip
# Flags that may differ between a run and its --resume: they change neither the steps nor the result.
NOT_RECIPE = {"resume", "threads", "push_to_hub", "output_dir"}


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface of ``python -m transformer.train``; the defaults are the bundled recipe."""
    parser = argparse.ArgumentParser(
        prog="python -m transformer.train",
        description="Train the sentiment classifier from scratch on a mixture of review and social text.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    data = parser.add_argument_group("data")
    data.add_argument("--data-dir", type=Path, default=Path("../shared/data"), help="the data folder (see its README)")
    data.add_argument(
        "--ood-file", type=Path, default=Path("benchmarks/ood_reviews.tsv"),
        help="hand-written out-of-domain reviews, one of the selection sets",
    )  # fmt: skip
    data.add_argument(
        "--check-file", type=Path, default=Path("benchmarks/everyday_sentences.tsv"),
        help="everyday sentences scored once at the end, like the test sets (not used for selection)",
    )  # fmt: skip
    data.add_argument("--imdb-dev-rows", type=int, default=1000, help="IMDB training reviews held out for selection")
    data.add_argument("--max-rows", type=int, default=None, help="read only the first N rows of every file")
    data.add_argument(
        "--source-weights", nargs="*", default=DEFAULT_WEIGHTS, metavar="NAME=W",
        help="examples drawn per epoch from each source, as a multiple of its size (0 leaves it out)",
    )  # fmt: skip
    data.add_argument("--output-dir", type=Path, default=Path("runs/model"), help="folder to write (replaced)")
    data.add_argument("--checkpoint-dir", type=Path, default=Path("runs/checkpoints"), help="resumable state")
    data.add_argument("--resume", action="store_true", help="continue the run whose state is in --checkpoint-dir")
    data.add_argument(
        "--keep-steps", type=int, default=12, metavar="N",
        help="keep the student at N steps, 0 and the shipped one included, log-spaced from the EMA's horizon "
        "(1 / (1 - --ema-decay) steps), in <output-dir>/checkpoints/ "
        "(float16, 4.9 MB each at the bundled size; the last is the model itself) and, with --push-to-hub, as "
        "branches step-<step>; 0 keeps none",
    )  # fmt: skip

    model = parser.add_argument_group("model")
    model.add_argument("--vocab-size", type=int, default=DEFAULT_VOCAB_SIZE, help="WordPiece vocabulary size")
    model.add_argument("--tokenizer", type=Path, default=None, help="use this tokenizer.json instead of learning one")
    model.add_argument("--d-model", type=int, default=128, help="embedding and hidden size")
    model.add_argument("--num-heads", type=int, default=4, help="attention heads per layer")
    model.add_argument("--num-layers", type=int, default=2, help="encoder blocks")
    model.add_argument("--d-ff", type=int, default=512, help="feed-forward inner size (the tutorial's 4 × d_model)")
    model.add_argument("--max-len", type=int, default=256, help="longest input in tokens; reviews are chunked")
    model.add_argument("--dropout", type=float, default=0.1, help="dropout everywhere in the model")
    model.add_argument(
        "--embedding-scale", action="store_true", help="multiply the embedding lookup by √D (off in the tutorial)"
    )
    model.add_argument(
        "--head-activation",
        choices=sorted(HEAD_ACTIVATIONS),
        default="relu",
        help="the classifier head's non-linearity",
    )

    pretraining = parser.add_argument_group("masked-language-model pre-training")
    pretraining.add_argument("--pretrain-epochs", type=int, default=0, help="epochs (0 = no pre-training)")
    pretraining.add_argument("--pretrain-windows", type=int, default=200_000, help="text windows read per epoch")
    pretraining.add_argument("--pretrain-lr", type=float, default=1e-3, help="peak learning rate")
    pretraining.add_argument("--mask-rate", type=float, default=0.15, help="share of tokens to predict")

    training = parser.add_argument_group("classification")
    training.add_argument("--epochs", type=int, default=2, help="epochs of the student")
    training.add_argument("--batch-size", type=int, default=64, help="examples per optimiser step")
    training.add_argument("--lr", type=float, default=1e-3, help="peak AdamW learning rate")
    training.add_argument("--weight-decay", type=float, default=0.1, help="AdamW weight decay")
    training.add_argument("--warmup", type=float, default=0.05, help="fraction of steps with linear warm-up")
    training.add_argument(
        "--embedding-lr-scale", type=float, default=11.0,
        help="the token embedding table's learning rate as a multiple of every phase's (its per-step weight decay "
        "kept): about √d_model lets an unscaled lookup's rows move as far per step, against the positional "
        "encoding, as those of a lookup scaled by √d_model (11 ≈ √128; 1 = one learning rate for all)",
    )  # fmt: skip
    training.add_argument("--label-smoothing", type=float, default=0.1, help="cross-entropy label smoothing")
    training.add_argument("--word-dropout", type=float, default=0.1, help="chance a training token becomes [UNK]")
    training.add_argument("--ema-decay", type=float, default=0.999, help="keep an EMA of the weights (0 = off)")
    training.add_argument("--teachers", type=int, default=0, help="teacher models whose mean prediction is distilled")
    training.add_argument("--teacher-epochs", type=int, default=1, help="epochs of each teacher")
    training.add_argument("--distill-weight", type=float, default=0.5, help="weight of the teachers' soft labels")
    training.add_argument(
        "--pair-weight", type=float, default=0.0,
        help="weight of a hinge between the two sides of each pair of opposite labels drawn, read side by side: a "
        "CAD review and its edit, a clause and its negation (source negation_pairs) (0 = off)",
    )  # fmt: skip
    training.add_argument(
        "--pair-margin", type=float, default=2.0,
        help="logits by which the positive side of a pair must outscore its negative twin",
    )  # fmt: skip

    training.add_argument(
        "--pairing-weight", type=float, default=0.0,
        help="weight of counterfactual logit pairing: the gap between a sentence's logits and those of a copy with "
        "its identity term, name, place, number, URL, handle or a non-opinion word changed (0 = off)",
    )  # fmt: skip
    training.add_argument(
        "--pairing-kinds", nargs="+", choices=KINDS, default=list(KINDS), help="the slot kinds paired (default: all)"
    )

    run = parser.add_argument_group("run")
    run.add_argument("--quick", action="store_true", help="tiny sizes and row counts (tests, smoke runs)")
    run.add_argument("--seed", type=int, default=0, help="random seed; a run is deterministic for a seed")
    run.add_argument("--device", default=None, help="torch device (default: cuda if available, else cpu)")
    run.add_argument("--threads", type=int, default=None, help="CPU threads for torch (default: one per core)")
    run.add_argument("--push-to-hub", metavar="REPO_ID", default=None, help="upload the folder to this Hub repo")
    return parser


def parse_args(argv: list[str]) -> argparse.Namespace:
    """Parse ``argv``; with ``--quick`` the quick sizes replace the defaults (explicit flags still win)."""
    parser = build_parser()
    if parser.parse_args(argv).quick:
        parser.set_defaults(**QUICK)
    args = parser.parse_args(argv)
    try:
        args.weights = parse_weights(args.source_weights)
    except ValueError as error:
        parser.error(str(error))
    if args.embedding_lr_scale <= 0:
        parser.error(f"--embedding-lr-scale must be positive, not {args.embedding_lr_scale}")
    if min(args.pair_weight, args.pair_margin, args.pairing_weight, args.keep_steps) < 0:
        parser.error("--pair-weight, --pair-margin, --pairing-weight and --keep-steps must be 0 or more")
    unknown = sorted(args.weights.keys() - set(SOURCES))
    if unknown:
        parser.error(f"--source-weights: no source named {', '.join(unknown)} (sources: {', '.join(SOURCES)})")
    return args


def build_model(args: argparse.Namespace, vocab_size: int, seed: int) -> TransformerClassifier:
    """A freshly initialised classifier with the sizes from the command line, drawn with ``seed``."""
    torch.manual_seed(seed)
    model = TransformerClassifier(
        vocab_size=vocab_size,
        num_classes=len(LABEL_NAMES),
        d_model=args.d_model,
        num_heads=args.num_heads,
        num_layers=args.num_layers,
        d_ff=args.d_ff,
        max_len=args.max_len,
        dropout=args.dropout,
        pad_token_id=PAD_ID,
        label_names=LABEL_NAMES,
        embedding_scale=args.embedding_scale,
        head_activation=args.head_activation,
    )
    # Rows of about unit size per coordinate, as the positional encoding's, whether or not the model scales them.
    std = args.d_model**-0.5 if args.embedding_scale else 1.0
    with torch.no_grad():
        nn.init.normal_(model.embedding.weight, std=std)
        model.embedding.weight[PAD_ID].zero_()
    return model


def open_checkpoints(args: argparse.Namespace) -> Checkpoints:
    """The checkpoint folder: emptied for a new run; checked against this run's recipe for ``--resume``.

    A folder that holds files but no ``recipe.json`` is not ours, and is never emptied.
    """
    folder = args.checkpoint_dir
    recipe = {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items() if k not in NOT_RECIPE}
    recipe_file = folder / "recipe.json"
    if args.resume:
        if not recipe_file.exists():
            sys.exit(f"error: --resume: no run to continue in {folder}")
        saved = json.loads(recipe_file.read_text(encoding="utf-8"))
        changed = sorted(k for k in recipe.keys() | saved.keys() if recipe.get(k) != saved.get(k))
        if changed:
            sys.exit(f"error: --resume: the run in {folder} had other settings: {', '.join(changed)}")
        return Checkpoints(folder)
    if folder.exists() and any(folder.iterdir()) and not recipe_file.exists():
        sys.exit(f"error: --checkpoint-dir {folder} holds files of something else; name an empty or new folder")
    Checkpoints(folder).clear()
    checkpoints = Checkpoints(folder)
    recipe_file.write_text(json.dumps(recipe, indent=2) + "\n", encoding="utf-8")
    return checkpoints


def main(argv: list[str] | None = None) -> dict:
    """Run the recipe and write the model folder; returns the metrics written to metrics.json."""
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parse_args(argv)
    started = time.perf_counter()
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    random.seed(args.seed)
    if device.type == "cuda":  # embedding backward uses atomics there unless told otherwise
        torch.use_deterministic_algorithms(True, warn_only=True)
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.push_to_hub:
        check_hub_access(args.push_to_hub)
    try:
        train_sets = read_training_sets(args.data_dir, args.imdb_dev_rows, args.max_rows, args.seed)
        dev_sets = read_dev_sets(args.data_dir, args.imdb_dev_rows, args.ood_file, args.max_rows)
        test_sets = read_test_sets(args.data_dir, args.max_rows)
        if args.check_file is not None:
            test_sets["everyday"] = read_labelled(args.check_file).rows(0, args.max_rows)
        unlabelled = read_unlabelled(args.data_dir, args.max_rows)
        neutral_dev = read_neutral_dev(args.data_dir, args.max_rows)
    except (OSError, ValueError) as error:
        sys.exit(f"error: {first_line(error)}")
    checkpoints = open_checkpoints(args)

    read = [name for name in TRAIN_FILES if name != "lexicon"]  # the vocabulary comes from real text only
    texts = [text for name in read for text in train_sets[name].texts] + unlabelled
    tokenizer_file = checkpoints.folder / "tokenizer.json"
    if args.tokenizer is not None or tokenizer_file.exists():
        tokenizer = Tokenizer.from_file(str(args.tokenizer or tokenizer_file))
    else:
        print(f"learning a {args.vocab_size}-piece vocabulary from {len(texts):,} texts", file=sys.stderr)
        tokenizer = train_tokenizer(texts, args.vocab_size)
        tokenizer.save(str(tokenizer_file))
    vocab_size = tokenizer.get_vocab_size()
    mixture = build_mixture(train_sets, tokenizer, args.max_len)
    print(f"mixture: {mixture.counts()} examples after chunking", file=sys.stderr)

    schedule = Schedule(args.epochs, args.lr, args.weight_decay, args.warmup, args.ema_decay, args.embedding_lr_scale)
    encoder = build_model(args, vocab_size, args.seed).to(device)
    pretrain_history = []
    if args.pretrain_epochs:
        windows = [w for e in tokenizer.encode_batch(texts) for w in chunk(e.ids, args.max_len) if w]
        mlm = replace(schedule, epochs=args.pretrain_epochs, lr=args.pretrain_lr, ema_decay=0.0)
        pretrain_history = pretrain(
            encoder, windows, args.pretrain_windows, args.batch_size, args.mask_rate, mlm, checkpoints, args.seed
        )
    pretrained = {k: v for k, v in encoder.state_dict().items() if not k.startswith("classifier.")}

    def build(seed: int) -> TransformerClassifier:
        model = build_model(args, vocab_size, seed)
        if args.pretrain_epochs:  # the pre-trained encoder; each seed still draws its own head
            model.load_state_dict(pretrained, strict=False)
        return model.to(device)

    def score(model: TransformerClassifier) -> dict:
        return score_sets(model, tokenizer, dev_sets)

    pairs = PairMargin(args.pair_weight, args.pair_margin)
    pairing = None
    if args.pairing_weight:
        opinion_words = frozenset(opinion_lexicon(train_sets["lexicon"]))
        kinds = tuple(args.pairing_kinds)
        pairing = build_pairing(args.pairing_weight, mixture, opinion_words, tokenizer, args.max_len, args.seed, kinds)
    setup = ClassifierTraining(
        mixture, args.weights, args.batch_size, args.word_dropout, args.label_smoothing, args.seed, pairs, pairing
    )
    labelled = target_distributions(mixture.labels)  # (n, C): one-hot, or (0.5, 0.5) for no opinion
    targets, teachers = labelled, []
    if args.teachers:
        teacher_schedule = replace(schedule, epochs=args.teacher_epochs)
        ensemble, teachers = teacher_targets(
            build, labelled, setup, args.teachers, score, teacher_schedule, checkpoints
        )
        targets = (1 - args.distill_weight) * labelled + args.distill_weight * ensemble
    student = build(args.seed)
    kept_dir = checkpoints.folder and checkpoints.folder / "kept"  # beside the resumable state: resumed, kept the same
    keeper = StepKeeper(args.keep_steps, kept_dir, start=ema_horizon(args.ema_decay)) if args.keep_steps else None
    history = train_classifier("student", student, targets, setup, score, schedule, checkpoints, keeper)

    student.eval()
    best = max(history, key=lambda record: record["dev"]["mean"])
    metrics = {
        "dev": best["dev"],
        "test": score_sets(student, tokenizer, test_sets),
        "best_epoch": best["epoch"],
        "train_seconds": round(time.perf_counter() - started, 1),
        "device": describe_device(device),
        "command": shlex.join(["python", "-m", "transformer.train", *argv]),
        "seed": args.seed,
        "arguments": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
        "train_examples": mixture.counts(),
        "dev_rows": {name: len(rows.texts) for name, rows in dev_sets.items()},
        "test_rows": {name: len(rows.texts) for name, rows in test_sets.items()},
        "pretrain_history": pretrain_history,
        "history": history,
        "teachers": teachers,
    }
    metrics["test"].pop("mean")  # the test sets are reported one by one, never averaged
    metrics.update(behaviour_report(student, tokenizer, dev_sets))
    metrics["neutral"] = {
        source: neutral_scores(positive_probabilities(student, tokenizer)(texts))
        for source, texts in neutral_dev.items()
    }
    metrics["probe"] = run_probe(positive_probabilities(student, tokenizer))  # both halves of the word lists
    kept = None
    if keeper is not None:  # the shipped weights are the best epoch's, taken at its last step: the final checkpoint
        final_step = keeper.total * best["epoch"] // args.epochs
        kept = (keeper.states(before=final_step), final_step, keeper.total)
    write_folder(args.output_dir, student.cpu(), tokenizer, metrics, render_model_card(student, metrics), kept)
    checkpoints.clear()
    print(json.dumps({k: metrics[k] for k in ("dev", "test", "train_seconds")}))
    if args.push_to_hub:
        push_folder(args.output_dir, args.push_to_hub)
    return metrics


def behaviour_report(model: TransformerClassifier, tokenizer: Tokenizer, dev_sets: dict) -> dict:
    """``composition`` (negation rows and CAD pairs of the selection sets) and ``behaviour`` (the suite's figures)."""
    suite = run_suite(build_suite(), positive_probabilities(model, tokenizer))
    return {"composition": composition_scores(model, tokenizer, dev_sets), "behaviour": summarise(suite)}


def write_folder(output_dir: Path, model, tokenizer, metrics: dict, card: str, kept: tuple | None = None) -> None:
    """Write the model folder next to ``output_dir``, then move it into place in one rename; ``kept``, ({step:
    float16 state}, final step, total steps), adds its checkpoints (``kept_steps.write_checkpoints``)."""
    output_dir = output_dir.resolve()
    output_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{output_dir.name}.", dir=output_dir.parent))
    try:
        model.save_pretrained(staging)  # config.json, model.safetensors (and a stub card, replaced below)
        tokenizer.save(str(staging / "tokenizer.json"))
        (staging / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n", encoding="utf-8")
        (staging / "README.md").write_text(card, encoding="utf-8")
        if kept is not None:
            write_checkpoints(staging, model, tokenizer, *kept)
        for path in staging.rglob("*"):
            path.chmod(0o755 if path.is_dir() else 0o644)  # safetensors writes owner-only files
        staging.chmod(0o755)  # mkdtemp makes an owner-only folder
        if output_dir.exists():
            previous = staging.with_name(staging.name + ".old")
            output_dir.rename(previous)
            staging.rename(output_dir)
            shutil.rmtree(previous)
        else:
            staging.rename(output_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def describe_device(device: torch.device) -> str:
    """A human-readable device name for the model card, e.g. ``cpu (1 thread, 2 cores)``."""
    if device.type == "cuda":
        return f"cuda ({torch.cuda.get_device_name(device)})"
    threads = torch.get_num_threads()
    return f"{device.type} ({threads} thread{'s' if threads > 1 else ''}, {os.cpu_count()} cores)"


def first_line(error: BaseException) -> str:
    """``TypeName: first line of the message``, for one-line error reports."""
    message = str(error).strip().splitlines()
    return f"{type(error).__name__}: {message[0]}" if message else type(error).__name__


def check_hub_access(repo_id: str) -> None:
    """Fail before training, with one line, if the Hub cannot be reached or no token is set."""
    try:
        HfApi().whoami()
    except Exception as error:  # network, auth and offline-mode errors all end the run the same way
        sys.exit(f"error: cannot push to {repo_id}: {first_line(error)}")


def push_folder(folder: Path, repo_id: str, api: HfApi | None = None) -> None:
    """Upload ``folder`` to the Hub model repo ``repo_id`` in one commit, creating the repo if needed, and each of its
    checkpoints as a branch named by its step (``api``: the seam the tests fake)."""
    api = api or HfApi()
    try:
        api.create_repo(repo_id, exist_ok=True)
        api.upload_folder(
            repo_id=repo_id, folder_path=folder, commit_message="Upload sentiment classifier",
            ignore_patterns=[f"{CHECKPOINTS_DIR}/*"],  # each checkpoint is a branch of its own
        )  # fmt: skip
        branches = push_checkpoints(folder, repo_id, api)
    except Exception as error:  # one line, whatever went wrong: the local folder is complete either way
        sys.exit(f"error: pushing {folder} to {repo_id} failed: {first_line(error)}")
    print(f"pushed {folder} to https://huggingface.co/{repo_id}; its checkpoints as branches: {', '.join(branches)}")


if __name__ == "__main__":
    main()
