"""Train the sentiment classifier from scratch on SST-2 and write one folder that ``from_pretrained`` reads.

The defaults are the recipe of the bundled checkpoint. A WordPiece tokenizer is trained on GLUE SST-2's
phrase-level training set; three teacher classifiers are trained on its labels; the shipped classifier
(the student, same shape) then learns from a mix of the true labels and the teachers' mean prediction.
Every model keeps its epoch with the best dev accuracy; test accuracy is measured once, at the end, on
the student.

Example (the command behind ``assets/model/``; one thread keeps it fast on a busy 2-core machine):
    python -m transformer.train --data-dir ../shared/data/sst2 --output-dir assets/model --threads 1

The output folder holds config.json, model.safetensors, tokenizer.json, metrics.json and README.md
(the model card). It is written to a temporary folder beside ``--output-dir`` and moved into place
only when complete. ``--push-to-hub owner/name`` then uploads it (token from ``HF_TOKEN`` or ``hf auth login``).

Shape letters: B = batch, N = sequence length, C = classes.
"""

import argparse
import copy
import json
import math
import os
import random
import shlex
import shutil
import sys
import tempfile
import time
from pathlib import Path

import torch
from huggingface_hub import HfApi
from torch import nn
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn
from tqdm import tqdm

from .classifier import TransformerClassifier
from .data import LABEL_NAMES, bucketed_batches, read_tsv
from .evaluate import accuracy, predict
from .model_card import render_model_card
from .tokenizer import DEFAULT_VOCAB_SIZE, PAD_ID, UNK_ID, pad_ids, train_tokenizer


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface of ``python -m transformer.train``; the defaults are the bundled recipe."""
    parser = argparse.ArgumentParser(
        prog="python -m transformer.train",
        description="Train the sentiment classifier from scratch on SST-2.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    data = parser.add_argument_group("data")
    data.add_argument("--data-dir", type=Path, default=Path("../shared/data/sst2"), help="folder with the TSV files")
    data.add_argument("--train-file", default="glue_train.tsv", help="training file inside --data-dir")
    data.add_argument("--dev-file", default="glue_dev.tsv", help="model-selection file inside --data-dir")
    data.add_argument("--test-file", default="sent_test.tsv", help="file scored once at the end, inside --data-dir")
    data.add_argument("--max-train-rows", type=int, default=None, help="use only the first N training rows (tests)")
    data.add_argument("--output-dir", type=Path, default=Path("runs/model"), help="folder to write (replaced)")

    model = parser.add_argument_group("model")
    model.add_argument("--vocab-size", type=int, default=DEFAULT_VOCAB_SIZE, help="WordPiece vocabulary size")
    model.add_argument("--d-model", type=int, default=128, help="embedding and hidden size")
    model.add_argument("--num-heads", type=int, default=4, help="attention heads per layer")
    model.add_argument("--num-layers", type=int, default=2, help="encoder blocks")
    model.add_argument("--d-ff", type=int, default=256, help="feed-forward inner size")
    model.add_argument("--max-len", type=int, default=256, help="longest input in tokens; longer inputs are cut")
    model.add_argument("--dropout", type=float, default=0.3, help="dropout everywhere in the model")
    model.add_argument(
        "--embedding-std",
        type=float,
        default=None,
        help="initial std of the embedding table before its sqrt(d-model) scaling (default: 1/sqrt(d-model), "
        "so scaled embeddings start at unit size like the positional encoding; nn.Embedding's own is 1.0)",
    )

    training = parser.add_argument_group("training")
    training.add_argument("--epochs", type=int, default=3, help="passes over the training set")
    training.add_argument("--batch-size", type=int, default=64, help="examples per optimiser step")
    training.add_argument("--lr", type=float, default=1e-3, help="peak AdamW learning rate")
    training.add_argument("--weight-decay", type=float, default=0.1, help="AdamW weight decay")
    training.add_argument("--warmup", type=float, default=0.05, help="fraction of steps with linear warm-up")
    training.add_argument("--label-smoothing", type=float, default=0.1, help="cross-entropy label smoothing")
    training.add_argument("--word-dropout", type=float, default=0.3, help="chance a training token becomes [UNK]")
    training.add_argument(
        "--ema-decay",
        type=float,
        default=0.999,
        help="evaluate and keep an EMA of the weights with this decay (0 = off)",
    )
    training.add_argument(
        "--teachers", type=int, default=3, help="train this many teacher models first and distil their ensemble"
    )
    training.add_argument("--teacher-epochs", type=int, default=2, help="epochs of each teacher")
    training.add_argument(
        "--distill-weight", type=float, default=0.7, help="weight of the teachers' soft labels against the true ones"
    )
    training.add_argument("--seed", type=int, default=0, help="random seed; a run is deterministic for a seed")
    training.add_argument("--device", default=None, help="torch device (default: cuda if available, else cpu)")
    training.add_argument(
        "--threads", type=int, default=None, help="CPU threads for torch (default: torch's choice, one per core)"
    )
    training.add_argument("--push-to-hub", metavar="REPO_ID", default=None, help="upload the folder to this Hub repo")
    return parser


def seed_everything(seed: int, device: torch.device) -> None:
    """Seed Python and torch so that a run is repeatable (CPU kernels are deterministic already)."""
    random.seed(seed)
    torch.manual_seed(seed)
    if device.type == "cuda":  # embedding backward uses atomics there unless told otherwise
        torch.use_deterministic_algorithms(True, warn_only=True)


def warmup_cosine(
    optimizer: torch.optim.Optimizer, warmup_steps: int, total_steps: int
) -> torch.optim.lr_scheduler.LambdaLR:
    """Linear warm-up from 0 to the peak learning rate, then cosine decay to 0."""

    def factor(step: int) -> float:
        if step < warmup_steps:
            return (step + 1) / warmup_steps
        progress = (step - warmup_steps) / max(1, total_steps - warmup_steps)
        return 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress)))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


def init_embeddings(model: TransformerClassifier, std: float | None) -> None:
    """Re-draw the embedding table from N(0, std²), 1/√D by default, keeping the padding row at zero."""
    std = model.d_model**-0.5 if std is None else std
    with torch.no_grad():
        nn.init.normal_(model.embedding.weight, std=std)
        model.embedding.weight[model.pad_token_id].zero_()


def adamw(model: nn.Module, lr: float, weight_decay: float) -> torch.optim.AdamW:
    """AdamW whose weight decay applies to matrices (embedding table included), not to biases or LayerNorm."""
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=lr)


def train_epoch(model, averaged, sequences, targets, batches, optimizer, scheduler, args, progress) -> float:
    """One pass over ``batches`` (lists of example indices); returns the mean training loss.

    ``targets`` holds each example's target distribution, shape (n, C); ``averaged`` (an ``AveragedModel``
    or None) is updated after every optimiser step.
    """
    model.train()
    device = next(model.parameters()).device
    loss_fn = nn.CrossEntropyLoss(label_smoothing=args.label_smoothing)
    total, count = 0.0, 0
    for rows in batches:
        input_ids, attention_mask = pad_ids([sequences[i] for i in rows])  # (B, N) each
        dropped = (torch.rand(input_ids.shape) < args.word_dropout) & attention_mask.bool()  # (B, N)
        input_ids = input_ids.masked_fill(dropped, UNK_ID)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
            logits = model(input_ids.to(device), attention_mask.to(device))  # (B, C)
        loss = loss_fn(logits.float(), targets[rows].to(device))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        if averaged is not None:
            averaged.update_parameters(model)
        total, count = total + loss.item() * len(rows), count + len(rows)
        progress.set_postfix(loss=f"{total / count:.4f}", refresh=False)
        progress.update()
    return total / count


@torch.no_grad()
def probabilities(model: TransformerClassifier, sequences: list[list[int]], batch_size: int = 512) -> torch.Tensor:
    """Class probabilities for token id sequences, in order: shape (n, C), on the CPU, in eval mode."""
    device = next(model.parameters()).device
    model.eval()
    order = sorted(range(len(sequences)), key=lambda i: len(sequences[i]))
    result = torch.empty(len(sequences), model.classifier[-1].out_features)
    for start in range(0, len(order), batch_size):
        rows = order[start : start + batch_size]
        input_ids, attention_mask = pad_ids([sequences[i] for i in rows])  # (B, N) each
        result[rows] = model(input_ids.to(device), attention_mask.to(device)).float().softmax(dim=-1).cpu()
    return result


def build_model(args: argparse.Namespace, vocab_size: int) -> TransformerClassifier:
    """A freshly initialised classifier with the sizes from the command line."""
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
    )
    init_embeddings(model, args.embedding_std)
    return model


def fit(model, tokenizer, sequences, targets, dev, args, epochs: int, seed: int, name: str):
    """Train ``model`` for ``epochs`` epochs on (sequences, target distributions), scoring dev after each.

    Returns:
        (per-epoch history, best dev accuracy, state dict of the best epoch); with ``--ema-decay`` the
        averaged weights are the ones scored and kept.
    """
    rng = random.Random(seed)
    total_steps = math.ceil(len(sequences) / args.batch_size) * epochs
    optimizer = adamw(model, args.lr, args.weight_decay)
    scheduler = warmup_cosine(optimizer, int(args.warmup * total_steps), total_steps)
    averaged = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(args.ema_decay)) if args.ema_decay else None
    scored = averaged.module if averaged else model
    history, best_accuracy, best_state = [], -1.0, None
    with tqdm(total=total_steps, desc=name, unit="step", file=sys.stderr, mininterval=1.0) as progress:
        for epoch in range(1, epochs + 1):
            batches = bucketed_batches([len(ids) for ids in sequences], args.batch_size, rng)
            loss = train_epoch(model, averaged, sequences, targets, batches, optimizer, scheduler, args, progress)
            dev_accuracy = accuracy(predict(scored, tokenizer, dev.texts), dev.labels)
            history.append({"epoch": epoch, "train_loss": round(loss, 4), "dev_accuracy": round(dev_accuracy, 4)})
            progress.write(f"{name} epoch {epoch}: train loss {loss:.4f}, dev accuracy {dev_accuracy:.4f}")
            if dev_accuracy > best_accuracy:
                best_accuracy, best_state = dev_accuracy, copy.deepcopy(scored.state_dict())
    return history, best_accuracy, best_state


def distillation_targets(args, tokenizer, sequences, labels, dev, device) -> tuple[torch.Tensor, list[dict]]:
    """Training targets: one-hot labels, mixed with the mean prediction of ``--teachers`` models if any.

    Each teacher is a model of the same shape trained on the one-hot labels with its own seed (seed + 1,
    seed + 2, ...) and kept at its best dev epoch; the student then learns from the ensemble's soft labels.

    Returns:
        (targets of shape (n, C), one summary dict per teacher).
    """
    one_hot = nn.functional.one_hot(torch.tensor(labels), len(LABEL_NAMES)).float()  # (n, C)
    if not args.teachers:
        return one_hot, []
    ensemble, summaries = torch.zeros_like(one_hot), []
    for teacher_seed in range(args.seed + 1, args.seed + 1 + args.teachers):
        torch.manual_seed(teacher_seed)
        teacher = build_model(args, tokenizer.get_vocab_size()).to(device)
        history, best, state = fit(
            teacher,
            tokenizer,
            sequences,
            one_hot,
            dev,
            args,
            args.teacher_epochs,
            teacher_seed,
            f"teacher {teacher_seed}",
        )
        teacher.load_state_dict(state)
        ensemble += probabilities(teacher, sequences) / args.teachers
        summaries.append({"seed": teacher_seed, "dev_accuracy": round(best, 4), "history": history})
    return (1 - args.distill_weight) * one_hot + args.distill_weight * ensemble, summaries


def write_folder(output_dir: Path, model, tokenizer, metrics: dict, card: str) -> None:
    """Write the model folder next to ``output_dir``, then move it into place in one rename."""
    output_dir = output_dir.resolve()
    output_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{output_dir.name}.", dir=output_dir.parent))
    try:
        model.save_pretrained(staging)  # config.json, model.safetensors (and a stub card, replaced below)
        tokenizer.save(str(staging / "tokenizer.json"))
        (staging / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n", encoding="utf-8")
        (staging / "README.md").write_text(card, encoding="utf-8")
        for path in staging.iterdir():
            path.chmod(0o644)  # safetensors writes owner-only files
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


def main(argv: list[str] | None = None) -> dict:
    """Train, select on dev, score test once, write the folder; returns the metrics written to metrics.json."""
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    started = time.perf_counter()
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    seed_everything(args.seed, device)
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.push_to_hub:
        check_hub_access(args.push_to_hub)

    try:
        train, dev, test = (read_tsv(args.data_dir / name) for name in (args.train_file, args.dev_file, args.test_file))
    except (OSError, ValueError) as error:
        sys.exit(f"error: {first_line(error)}")
    train_texts, train_labels = train.texts[: args.max_train_rows], train.labels[: args.max_train_rows]

    tokenizer = train_tokenizer(train_texts, args.vocab_size)
    sequences = [encoding.ids[: args.max_len] for encoding in tokenizer.encode_batch(train_texts)]
    targets, teachers = distillation_targets(args, tokenizer, sequences, train_labels, dev, device)
    torch.manual_seed(args.seed)
    model = build_model(args, tokenizer.get_vocab_size()).to(device)
    history, best_accuracy, best_state = fit(
        model, tokenizer, sequences, targets, dev, args, args.epochs, args.seed, "training"
    )

    model.load_state_dict(best_state)
    model.eval()
    test_accuracy = accuracy(predict(model, tokenizer, test.texts), test.labels)
    metrics = {
        "dev_accuracy": round(best_accuracy, 4),
        "test_accuracy": round(test_accuracy, 4),
        "best_epoch": max(history, key=lambda h: h["dev_accuracy"])["epoch"],
        "train_seconds": round(time.perf_counter() - started, 1),
        "device": describe_device(device),
        "command": shlex.join(["python", "-m", "transformer.train", *argv]),
        "seed": args.seed,
        "arguments": {key: str(value) if isinstance(value, Path) else value for key, value in vars(args).items()},
        "data": {"train": args.train_file, "dev": args.dev_file, "test": args.test_file},
        "train_rows": len(train_texts),
        "dev_rows": len(dev.texts),
        "test_rows": len(test.texts),
        "history": history,
        "teachers": teachers,
    }
    write_folder(args.output_dir, model.cpu(), tokenizer, metrics, render_model_card(model, metrics))
    print(json.dumps({k: metrics[k] for k in ("dev_accuracy", "test_accuracy", "train_seconds")}))
    if args.push_to_hub:
        push_folder(args.output_dir, args.push_to_hub)
    return metrics


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


def push_folder(folder: Path, repo_id: str) -> None:
    """Upload ``folder`` to the Hub model repo ``repo_id`` in one commit, creating the repo if needed."""
    api = HfApi()
    try:
        api.create_repo(repo_id, exist_ok=True)
        api.upload_folder(repo_id=repo_id, folder_path=folder, commit_message="Upload sentiment classifier")
    except Exception as error:  # one line, whatever went wrong: the local folder is complete either way
        sys.exit(f"error: pushing {folder} to {repo_id} failed: {first_line(error)}")
    print(f"pushed {folder} to https://huggingface.co/{repo_id}")


if __name__ == "__main__":
    main()
