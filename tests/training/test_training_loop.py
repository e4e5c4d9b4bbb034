"""The training loop and the classification objective: attention mask, word dropout, EMA, best epoch, resume.

Each check here is one that a plausible slip in ``transformer/training`` fails: the forward dropping the
attention mask, word dropout writing another token than [UNK], an inverted EMA decay, a checkpoint that
does not restore the random state.
"""

import copy
import inspect
import itertools
import random
from dataclasses import replace
from pathlib import Path

import pytest
import torch
from tiny import tiny_model
from torch import nn

import transformer.training.phases as phases_module
from transformer.classifier import TransformerClassifier
from transformer.tokenizer import PAD_ID, UNK_ID, pad_ids
from transformer.training import loop
from transformer.training.loop import Checkpoints, Phase, Schedule, adamw, fit, warmup_cosine
from transformer.training.mixture import Mixture
from transformer.training.objectives import (
    MaskedLanguageModel,
    PairMargin,
    classification_loss,
    drop_words,
    pair_margin_loss,
)
from transformer.training.phases import ClassifierTraining, teacher_targets, train_classifier
from transformer.training.scoring import window_probabilities

SEQUENCES = [[5, 6], [5, 6, 7, 8, 9, 10, 11, 12, 13], [7], [20, 21, 22, 23]]  # very different lengths
TARGETS = torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.3, 0.7], [1.0, 0.0]])


def record_forward_calls(model: TransformerClassifier) -> list[dict]:
    """Every later call of ``model``, as its arguments by name (input_ids, attention_mask, ...)."""
    calls, signature = [], inspect.signature(TransformerClassifier.forward)

    def hook(module, args, kwargs, output):
        calls.append(signature.bind(module, *args, **kwargs).arguments)

    model.register_forward_hook(hook, with_kwargs=True)
    return calls


def snapshot(module: nn.Module) -> dict[str, torch.Tensor]:
    return {name: value.detach().clone() for name, value in module.state_dict().items()}


# --- (a) the attention mask reaches the model in training ---------------------------------------------------


def test_classification_loss_gives_the_model_the_attention_mask():
    model = tiny_model()
    calls = record_forward_calls(model)
    classification_loss(model, SEQUENCES, TARGETS, [0, 1, 2], word_dropout=0.0, label_smoothing=0.0)
    expected_ids, expected_mask = pad_ids(SEQUENCES[:3])
    assert len(calls) == 1 and torch.equal(calls[0]["input_ids"], expected_ids)
    assert calls[0].get("attention_mask") is not None, "the training forward was called without the attention mask"
    assert torch.equal(calls[0]["attention_mask"].long(), expected_mask)


def test_loss_of_a_padded_batch_is_the_mean_of_each_row_alone():
    model = tiny_model()  # no dropout: every call sees the same function
    rows = [0, 1, 2, 3]
    batched = classification_loss(model, SEQUENCES, TARGETS, rows, word_dropout=0.0, label_smoothing=0.1)
    alone = [classification_loss(model, SEQUENCES, TARGETS, [i], 0.0, 0.1) for i in rows]
    torch.testing.assert_close(batched, torch.stack(alone).mean(), atol=1e-5, rtol=1e-5)
    # The check has power: this model reads padding differently when it is not masked.
    input_ids, attention_mask = pad_ids(SEQUENCES)
    with torch.no_grad():
        assert not torch.allclose(model(input_ids)[0], model(input_ids, attention_mask)[0], atol=1e-3)


def test_classification_loss_is_the_hand_computed_label_smoothed_cross_entropy():
    # Smoothing ε mixes each target with the uniform distribution: q = (1 − ε)·t + ε / C, loss = −Σ q·log p.
    model, rows, smoothing = tiny_model(), [0, 2, 3], 0.2
    input_ids, attention_mask = pad_ids([SEQUENCES[i] for i in rows])
    with torch.no_grad():
        log_p = model(input_ids, attention_mask).log_softmax(dim=-1)  # (3, 2)
    smoothed = (1 - smoothing) * TARGETS[rows] + smoothing / 2  # row 2 is a soft target, (0.3, 0.7)
    expected = -(smoothed * log_p).sum(dim=-1).mean()
    found = classification_loss(model, SEQUENCES, TARGETS, rows, word_dropout=0.0, label_smoothing=smoothing)
    torch.testing.assert_close(found.detach(), expected, atol=1e-6, rtol=1e-6)
    plain = -(TARGETS[rows] * log_p).sum(dim=-1).mean()
    assert abs(found.item() - plain.item()) > 1e-3  # the check has power: smoothing moves this loss


def test_scoring_a_padded_batch_gives_each_row_its_own_probabilities():
    model = tiny_model()
    batched = window_probabilities(model, SEQUENCES, batch_size=4)
    alone = torch.cat([window_probabilities(model, [sequence]) for sequence in SEQUENCES])
    torch.testing.assert_close(batched, alone, atol=1e-5, rtol=1e-5)


# --- (b) word dropout writes [UNK], and the model sees it --------------------------------------------------------


def test_drop_words_at_rate_one_turns_every_real_token_into_unk_and_leaves_padding():
    input_ids, attention_mask = pad_ids(SEQUENCES)
    dropped = drop_words(input_ids, attention_mask, rate=1.0)
    real = attention_mask.bool()
    assert (dropped[real] == UNK_ID).all() and (dropped[~real] == PAD_ID).all()
    assert torch.equal(drop_words(input_ids, attention_mask, rate=0.0), input_ids)


def test_drop_words_replaces_about_rate_of_the_tokens_and_only_with_unk():
    torch.manual_seed(0)
    lengths = torch.randint(1, 60, (300,)).tolist()
    input_ids, attention_mask = pad_ids([list(range(3, 3 + n)) for n in lengths])
    dropped = drop_words(input_ids, attention_mask, rate=0.3)
    changed = dropped != input_ids
    assert (dropped[changed] == UNK_ID).all() and not changed[attention_mask == 0].any()
    assert changed.sum().item() / attention_mask.sum().item() == pytest.approx(0.3, abs=0.02)


def test_classification_loss_feeds_unk_to_the_model_under_word_dropout():
    model = tiny_model()
    calls = record_forward_calls(model)
    classification_loss(model, SEQUENCES, TARGETS, [0, 1, 3], word_dropout=1.0, label_smoothing=0.0)
    _, attention_mask = pad_ids([SEQUENCES[i] for i in (0, 1, 3)])
    seen = calls[0]["input_ids"]
    assert (seen[attention_mask == 1] == UNK_ID).all() and (seen[attention_mask == 0] == PAD_ID).all()
    classification_loss(model, SEQUENCES, TARGETS, [0, 1, 3], word_dropout=0.0, label_smoothing=0.0)
    assert not (calls[1]["input_ids"] == UNK_ID).any()


# --- (c) the EMA, the best epoch and what fit returns -------------------------------------------------------------


class Regression:
    """A small model fitted to fixed data; the loss records the weights the model had before each step."""

    def __init__(self, batches_per_epoch: int = 3, seed: int = 0):
        generator = torch.Generator().manual_seed(seed)
        self.inputs = torch.randn(24, 4, generator=generator)
        self.outputs = torch.randn(24, 2, generator=generator)
        torch.manual_seed(seed)
        self.model = nn.Sequential(nn.Linear(4, 8), nn.LayerNorm(8), nn.GELU(), nn.Linear(8, 2))
        self.batches_per_epoch = batches_per_epoch
        self.before_step, self.losses = [], []

    def batches(self, epoch: int) -> list[list[int]]:
        order = list(range(24))
        random.Random(epoch).shuffle(order)
        size = 24 // self.batches_per_epoch
        return [order[i : i + size] for i in range(0, 24, size)]

    def loss(self, model: nn.Module, rows: list[int]) -> torch.Tensor:
        self.before_step.append(snapshot(model))
        loss = nn.functional.mse_loss(model(self.inputs[rows]), self.outputs[rows])
        self.losses.append(loss.item())
        return loss

    def weights_after_each_step(self) -> list[dict]:
        """p_1 ... p_n: what the model held after each optimiser step (the last is its final state)."""
        return [*self.before_step[1:], snapshot(self.model)]


def hand_ema(weights: list[dict], decay: float) -> list[dict]:
    """The EMA after each step: the first update copies, then ema = decay * ema + (1 - decay) * weights."""
    averages = [weights[0]]
    for current in weights[1:]:
        averages.append({k: decay * averages[-1][k] + (1 - decay) * current[k] for k in current})
    return averages


def assert_same_weights(actual: dict, expected: dict, atol: float = 1e-6) -> None:
    assert set(actual) == set(expected)
    for name in expected:
        torch.testing.assert_close(actual[name], expected[name], atol=atol, rtol=1e-5, msg=name)


def test_the_kept_and_scored_weights_are_the_hand_computed_ema():
    task, decay = Regression(), 0.9
    scored = []

    def score(model: nn.Module) -> dict:
        scored.append(snapshot(model))
        return {"mean": [0.2, 0.6][len(scored) - 1]}

    schedule = Schedule(epochs=2, lr=0.05, warmup=0.0, ema_decay=decay)
    history, kept = fit(task.model, Phase("ema", task.batches, task.loss, score), schedule, Checkpoints(None))
    weights = task.weights_after_each_step()
    assert len(weights) == 6
    ema = hand_ema(weights, decay)
    assert_same_weights(scored[0], ema[2])  # the EMA is what each epoch is scored on ...
    assert_same_weights(scored[1], ema[5])
    assert_same_weights(kept, ema[5])  # ... and what is kept
    assert_same_weights(snapshot(task.model), weights[-1])  # the model itself keeps its last weights
    # The check has power: after six steps the average lags well behind the weights.
    assert max((ema[5][k] - weights[-1][k]).abs().max().item() for k in weights[-1]) > 1e-2
    assert [epoch["dev"]["mean"] for epoch in history] == [0.2, 0.6]


def test_fit_keeps_the_best_scoring_epoch_and_records_each_epoch():
    task = Regression()
    scored, values = [], [0.5, 0.9, 0.7]

    def score(model: nn.Module) -> dict:
        scored.append(snapshot(model))
        return {"only": values[len(scored) - 1], "mean": values[len(scored) - 1]}

    schedule = Schedule(epochs=3, lr=0.05, warmup=0.0, ema_decay=0.5)
    history, kept = fit(task.model, Phase("best", task.batches, task.loss, score), schedule, Checkpoints(None))
    assert_same_weights(kept, scored[1], atol=0)
    assert [epoch["epoch"] for epoch in history] == [1, 2, 3]
    assert [epoch["dev"] for epoch in history] == [{"only": v, "mean": v} for v in values]
    means = [sum(task.losses[i : i + 3]) / 3 for i in (0, 3, 6)]
    assert [epoch["train_loss"] for epoch in history] == [round(m, 4) for m in means]


def test_without_ema_or_score_fit_keeps_the_last_weights():
    task = Regression()
    history, kept = fit(task.model, Phase("plain", task.batches, task.loss), Schedule(2, 0.05), Checkpoints(None))
    assert_same_weights(kept, snapshot(task.model), atol=0)
    assert [set(epoch) for epoch in history] == [{"epoch", "train_loss"}] * 2
    assert not torch.equal(kept["0.weight"], task.before_step[0]["0.weight"])  # it did train


# --- resume: the state saved after an epoch restores everything ------------------------------------------------


class Interrupted(Exception):
    pass


class InterruptedCheckpoints(Checkpoints):
    """Real checkpoints that stop the run right after the first one is written, like a crash would."""

    def save(self, name: str, state: dict) -> None:
        super().save(name, state)
        raise Interrupted


def noisy_task() -> tuple[Regression, Phase]:
    """A regression whose loss and model both draw from torch's random state (dropout and noise)."""
    task = Regression(seed=1)
    task.model = nn.Sequential(nn.Linear(4, 16), nn.Dropout(0.3), nn.GELU(), nn.Linear(16, 2))

    def loss(model, rows):
        noise = 0.1 * torch.randn(len(rows), 2)
        return nn.functional.mse_loss(model(task.inputs[rows]), task.outputs[rows] + noise)

    return task, Phase("noisy", task.batches, loss, lambda model: {"mean": -model[0].weight.norm().item()})


def test_a_resumed_fit_ends_exactly_like_an_uninterrupted_one(tmp_path):
    schedule = Schedule(epochs=3, lr=0.05, warmup=0.3, ema_decay=0.7)
    task, phase = noisy_task()
    history, kept = fit(task.model, phase, schedule, Checkpoints(tmp_path / "straight"))

    first, phase = noisy_task()
    with pytest.raises(Interrupted):
        fit(first.model, phase, schedule, InterruptedCheckpoints(tmp_path / "interrupted"))
    assert [path.name for path in (tmp_path / "interrupted").iterdir()] == ["noisy.pt"]
    second, phase = noisy_task()
    torch.manual_seed(123)  # whatever the random state of the new process, the checkpoint's is restored
    resumed_history, resumed_kept = fit(second.model, phase, schedule, Checkpoints(tmp_path / "interrupted"))

    assert resumed_history == history and len(history) == 3
    assert_same_weights(resumed_kept, kept, atol=0)
    assert_same_weights(snapshot(second.model), snapshot(task.model), atol=0)


def test_a_resumed_fit_keeps_the_embedding_tables_own_group(tmp_path, monkeypatch):
    optimizers, real_adamw = [], loop.adamw
    monkeypatch.setattr(loop, "adamw", lambda *args: optimizers.append(real_adamw(*args)) or optimizers[-1])
    setup, schedule = classification_setup({}), Schedule(epochs=2, lr=1e-2, warmup=0.3, embedding_lr_scale=5.0)
    one_hot = nn.functional.one_hot(torch.tensor(setup.mixture.labels), 2).float()

    def run(checkpoints: Checkpoints) -> nn.Module:
        model = tiny_model()
        train_classifier("s", model, one_hot, setup, None, schedule, checkpoints)
        return model

    straight = run(Checkpoints(tmp_path / "straight"))
    with pytest.raises(Interrupted):
        run(InterruptedCheckpoints(tmp_path / "interrupted"))
    resumed = run(Checkpoints(tmp_path / "interrupted"))

    groups = [optimizer.state_dict()["param_groups"] for optimizer in (optimizers[0], optimizers[2])]
    assert groups[0] == groups[1] and len(groups[0]) == 3
    assert [group["initial_lr"] for group in groups[0]] == [1e-2, 1e-2, 5e-2]
    assert groups[0][2]["params"] == [len(groups[0][0]["params"]) + len(groups[0][1]["params"])]  # the table alone
    assert_same_weights(snapshot(resumed), snapshot(straight), atol=0)


def test_checkpoints_round_trip_and_a_failed_save_keeps_the_previous_one(tmp_path, monkeypatch):
    checkpoints = Checkpoints(tmp_path / "state")
    assert checkpoints.load("phase") is None
    checkpoints.save("phase", {"epoch": 1, "weights": torch.arange(3)})
    assert checkpoints.load("phase")["epoch"] == 1

    def crash_mid_write(state, file):
        Path(file).write_bytes(b"half a checkpoint")
        raise OSError("disk full")

    monkeypatch.setattr(loop.torch, "save", crash_mid_write)
    with pytest.raises(OSError, match="disk full"):
        checkpoints.save("phase", {"epoch": 2, "weights": torch.arange(3)})
    monkeypatch.undo()
    saved = checkpoints.load("phase")
    assert saved["epoch"] == 1 and torch.equal(saved["weights"], torch.arange(3))
    checkpoints.clear()
    assert not (tmp_path / "state").exists()
    nowhere = Checkpoints(None)
    nowhere.save("phase", {"epoch": 1})
    assert nowhere.load("phase") is None and nowhere.path("phase") is None


# --- the optimiser and the schedule -------------------------------------------------------------------------------


def test_adamw_decays_matrices_only():
    model = tiny_model()
    decay, no_decay = adamw(model, lr=1e-3, weight_decay=0.1).param_groups
    names = {id(p): name for name, p in model.named_parameters()}
    decayed = {names[id(p)] for p in decay["params"]}
    assert decay["weight_decay"] == 0.1 and no_decay["weight_decay"] == 0.0
    assert "embedding.weight" in decayed and "classifier.0.weight" in decayed
    assert all(model.get_parameter(name).dim() >= 2 for name in decayed)
    not_decayed = {names[id(p)] for p in no_decay["params"]}
    assert not_decayed == set(names.values()) - decayed and "norm.weight" in not_decayed
    assert all(name.endswith(("bias", "norm.weight")) or ".norm" in name for name in not_decayed)


def one_adamw_step(model: nn.Module, embedding_lr_scale: float, lr: float = 1e-2, weight_decay: float = 0.1) -> dict:
    """How far one AdamW step on a fixed batch moves each parameter of ``model`` (itself left untouched)."""
    model = copy.deepcopy(model)
    before = snapshot(model)
    optimizer = adamw(model, lr, weight_decay, embedding_lr_scale)
    classification_loss(model, SEQUENCES, TARGETS, [0, 1, 2, 3], 0.0, 0.0).backward()
    optimizer.step()
    return {name: value - before[name] for name, value in snapshot(model).items()}


def test_an_embedding_lr_scale_of_one_leaves_the_optimiser_as_it_was():
    model = tiny_model()
    default, one = adamw(model, 1e-3, 0.1), adamw(model, 1e-3, 0.1, embedding_lr_scale=1.0)
    assert len(one.param_groups) == 2 and one.state_dict()["param_groups"] == default.state_dict()["param_groups"]
    assert [group["lr"] for group in one.param_groups] == [1e-3, 1e-3]
    assert [[id(p) for p in group["params"]] for group in one.param_groups] == [
        [id(p) for p in group["params"]] for group in default.param_groups
    ]


@pytest.mark.parametrize("build", [tiny_model, lambda: MaskedLanguageModel(tiny_model())], ids=["classifier", "mlm"])
def test_the_embedding_table_alone_gets_k_times_the_learning_rate_through_the_schedule(build):
    model, k, lr = build(), 11.0, 1e-3
    table = next(m.weight for m in model.modules() if isinstance(m, nn.Embedding))
    decay, no_decay, embedding = adamw(model, lr, 0.1, embedding_lr_scale=k).param_groups
    before_decay, before_no_decay = adamw(model, lr, 0.1).param_groups
    assert len(embedding["params"]) == 1 and embedding["params"][0] is table  # the tied MLM table only once
    assert [id(p) for p in decay["params"]] == [id(p) for p in before_decay["params"] if p is not table]
    assert [id(p) for p in no_decay["params"]] == [id(p) for p in before_no_decay["params"]]
    assert (decay["weight_decay"], no_decay["weight_decay"]) == (0.1, 0.0)
    # The scheduler scales each group from its own peak, so the ratio holds at every step.
    optimizer = adamw(model, lr, 0.1, embedding_lr_scale=k)
    scheduler = warmup_cosine(optimizer, warmup_steps=3, total_steps=10)
    for _ in range(10):
        rates = [group["lr"] for group in optimizer.param_groups]
        assert rates[0] == rates[1] and rates[2] == pytest.approx(k * rates[0]) and rates[0] > 0
        optimizer.step()
        scheduler.step()
    assert rates[0] < lr / 2  # it did decay


def test_a_scaled_table_steps_k_times_further_with_the_same_decay_per_step():
    # AdamW's first step: p ← p − lr·wd·p − lr·u with |u| ≈ 1. At scale k only the table's u-term grows k times.
    model, k, lr, weight_decay = tiny_model(), 4.0, 1e-2, 0.1
    plain, scaled = one_adamw_step(model, 1.0, lr, weight_decay), one_adamw_step(model, k, lr, weight_decay)
    decayed = -lr * weight_decay * model.embedding.weight.detach()
    torch.testing.assert_close(scaled["embedding.weight"], decayed + k * (plain["embedding.weight"] - decayed))
    assert (plain["embedding.weight"] - decayed).abs().max() > 1e-3  # the table did get a gradient step
    for name in plain.keys() - {"embedding.weight"}:
        assert torch.equal(scaled[name], plain[name]), name


def test_warmup_cosine_rises_linearly_then_decays_to_zero():
    optimizer = torch.optim.SGD([nn.Parameter(torch.zeros(1))], lr=2.0)
    scheduler = warmup_cosine(optimizer, warmup_steps=10, total_steps=110)
    rates = []
    for _ in range(111):
        rates.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        scheduler.step()
    assert rates[0] == pytest.approx(0.2) and rates[9] == pytest.approx(2.0) and rates[10] == pytest.approx(2.0)
    assert rates[60] == pytest.approx(1.0) and rates[110] == pytest.approx(0.0, abs=1e-9)
    assert all(a < b for a, b in itertools.pairwise(rates[:10]))
    assert all(a >= b for a, b in itertools.pairwise(rates[10:]))


# --- the classification phases ------------------------------------------------------------------------------------


def classification_setup(weights: dict[str, float]) -> ClassifierTraining:
    """A three-source mixture of 12, 6 and 6 learnable sequences (token 10 = positive, 11 = negative)."""
    rng = random.Random(0)
    sequences, labels, sources = [], [], []
    for source, count in enumerate((12, 6, 6)):
        for _ in range(count):
            label = rng.randrange(2)
            sequences.append([rng.randrange(12, 50) for _ in range(rng.randint(1, 6))] + [11 - label])
            labels.append(label)
            sources.append(source)
    return ClassifierTraining(Mixture(["a", "b", "c"], sequences, labels, sources), weights, 4, 0.1, 0.1, seed=0)


def test_a_classifier_trains_only_on_the_weighted_sources(monkeypatch):
    setup = classification_setup({"b": 0, "c": 2})
    seen = []
    real_loss = phases_module.classification_loss

    def recording_loss(model, sequences, targets, rows, *args):
        seen.extend(rows)
        return real_loss(model, sequences, targets, rows, *args)

    monkeypatch.setattr(phases_module, "classification_loss", recording_loss)
    one_hot = nn.functional.one_hot(torch.tensor(setup.mixture.labels), 2).float()
    history = train_classifier("c", tiny_model(), one_hot, setup, None, Schedule(2, 1e-2), Checkpoints(None))
    assert len(history) == 2
    per_epoch = sorted(seen[: len(seen) // 2])
    assert per_epoch == sorted([*range(12), *range(18, 24), *range(18, 24)])  # a once, b never, c twice
    assert sorted(seen[len(seen) // 2 :]) == per_epoch and seen[: len(seen) // 2] != seen[len(seen) // 2 :]


def test_a_classifier_trains_with_the_setups_label_smoothing_and_pairs(monkeypatch):
    # Word dropout and smoothing take different values here, so neither can stand in for the other.
    setup = replace(classification_setup({"b": 0, "c": 0}), word_dropout=0.05, label_smoothing=0.3)
    partners = [1, 0, *[-1] * (len(setup.mixture.sequences) - 2)]
    setup = replace(setup, mixture=replace(setup.mixture, partners=partners), pairs=PairMargin(0.5, 1.0))
    passed, real_loss = [], phases_module.classification_loss
    signature = inspect.signature(real_loss)

    def recording_loss(*args, **kwargs):
        passed.append(signature.bind(*args, **kwargs).arguments)
        return real_loss(*args, **kwargs)

    monkeypatch.setattr(phases_module, "classification_loss", recording_loss)
    one_hot = nn.functional.one_hot(torch.tensor(setup.mixture.labels), 2).float()
    train_classifier("s", tiny_model(), one_hot, setup, None, Schedule(1, 1e-2), Checkpoints(None))
    assert passed and {(call["word_dropout"], call["label_smoothing"]) for call in passed} == {(0.05, 0.3)}
    assert all(call["partners"] is partners and call["pairs"] == PairMargin(0.5, 1.0) for call in passed)


def test_teacher_targets_average_the_teachers_and_are_read_back_from_checkpoints(tmp_path):
    setup = classification_setup({})
    one_hot = nn.functional.one_hot(torch.tensor(setup.mixture.labels), 2).float()
    built = []

    def build(seed: int) -> TransformerClassifier:
        built.append(seed)
        return tiny_model(seed=seed)

    checkpoints = Checkpoints(tmp_path / "state")
    schedule = Schedule(1, 1e-2)
    ensemble, teachers = teacher_targets(build, one_hot, setup, 2, None, schedule, checkpoints)
    assert built == [1, 2] and [teacher["seed"] for teacher in teachers] == [1, 2]
    saved = [checkpoints.load(f"teacher-{k}-probabilities")["probabilities"] for k in (1, 2)]
    torch.testing.assert_close(ensemble, (saved[0] + saved[1]) / 2)
    assert ensemble.shape == (24, 2) and torch.allclose(ensemble.sum(dim=1), torch.ones(24))
    assert not torch.allclose(saved[0], saved[1])  # two seeds, two different teachers

    def must_not_build(seed: int):
        raise AssertionError(f"teacher {seed} was trained again instead of read back")

    again, teachers_again = teacher_targets(must_not_build, one_hot, setup, 2, None, schedule, checkpoints)
    assert torch.equal(again, ensemble) and teachers_again == teachers


# --- (f) the hinge between counterfactual twins ------------------------------------------------------------


def test_the_pair_hinge_is_hand_computed_and_signed_by_which_side_is_positive():
    logits = torch.tensor([[0.0, 3.0], [0.0, 0.5], [1.0, 0.0]])  # z = 3, 0.5, -1
    partner_logits = torch.tensor([[0.0, -1.0], [0.0, 0.0], [0.0, 0.0]])  # z = -1, 0, 0
    sign = torch.tensor([1.0, 1.0, -1.0])  # the first side is positive, positive, negative
    # hinges: max(0, 2 - 4) = 0, max(0, 2 - 0.5) = 1.5, max(0, 2 - (-1)·(-1 - 0)) = 1
    torch.testing.assert_close(pair_margin_loss(logits, partner_logits, sign, 2.0), torch.tensor([0.0, 1.5, 1.0]))
    flipped = pair_margin_loss(logits, partner_logits, -sign, 2.0)  # the check has power: the sign matters
    torch.testing.assert_close(flipped, torch.tensor([6.0, 2.5, 3.0]))


def test_at_weight_zero_the_pairs_change_nothing():
    model, partners = tiny_model(), [3, -1, -1, 0]
    calls = record_forward_calls(model)
    plain = classification_loss(model, SEQUENCES, TARGETS, [0, 1, 2], 0.0, 0.1)
    off = classification_loss(model, SEQUENCES, TARGETS, [0, 1, 2], 0.0, 0.1, partners, PairMargin(0.0))
    assert torch.equal(plain, off) and calls[0]["input_ids"].shape == calls[1]["input_ids"].shape


def test_a_paired_row_is_read_beside_its_partner_and_adds_weight_times_its_hinge():
    model, rows, partners = tiny_model(), [0, 1, 2], [3, -1, -1, 0]  # row 0 (negative) and row 3 (negative too)
    targets = TARGETS.clone()
    targets[3] = torch.tensor([0.0, 1.0])  # make row 3 row 0's positive twin
    calls = record_forward_calls(model)
    found = classification_loss(model, SEQUENCES, targets, rows, 0.0, 0.0, partners, PairMargin(0.7, 5.0))
    read = calls[0]["input_ids"]
    assert read.shape[0] == 4 and read[3, :4].tolist() == SEQUENCES[3]  # the partner, after the rows
    ids, mask = pad_ids([SEQUENCES[i] for i in [0, 1, 2, 3]])
    with torch.no_grad():
        logits = model(ids, mask)
    cross_entropy = nn.functional.cross_entropy(logits[:3], targets[rows])
    hinge = pair_margin_loss(logits[[0]], logits[[3]], torch.tensor([-1.0]), 5.0)
    assert hinge.sum().item() > 0  # the margin is not met by an untrained model, so the term is there
    # One pair among three rows: its hinge weighs as one row of the batch does.
    torch.testing.assert_close(found.detach(), cross_entropy + 0.7 * hinge.sum() / 3, atol=1e-6, rtol=1e-6)
