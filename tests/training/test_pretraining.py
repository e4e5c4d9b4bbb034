"""Masked-language-model pre-training: BERT's corruption, the loss, and the encoder it hands to fine-tuning."""

import inspect
import math

import pytest
import torch
from conftest import toy_rows

import transformer.train as train_module
import transformer.training.phases as phases_module
from transformer.tokenizer import MASK_ID, PAD_ID, SPECIAL_TOKENS, pad_ids, train_tokenizer
from transformer.train import build_model, main, parse_args
from transformer.training.loop import Checkpoints, Schedule
from transformer.training.mixture import chunk
from transformer.training.objectives import MaskedLanguageModel, mask_tokens, mlm_loss
from transformer.training.phases import pretrain


@pytest.fixture(scope="module")
def corpus():
    """A toy tokenizer and the 32-token windows of 120 three-sentence toy reviews."""
    texts = [text for text, _ in toy_rows(120, seed=5, sentences=3)]
    tokenizer = train_tokenizer(texts, vocab_size=100)
    windows = [window for encoding in tokenizer.encode_batch(texts) for window in chunk(encoding.ids, 32)]
    return tokenizer, windows


def fresh_encoder(vocab_size: int, seed: int = 0, *flags: str):
    """A classifier built the way ``transformer.train`` builds one, with the --quick sizes."""
    return build_model(parse_args(["--quick", *flags]), vocab_size, seed)


def snapshot(module: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {name: value.detach().clone() for name, value in module.state_dict().items()}


def test_pretraining_loss_falls_and_changes_the_encoder_but_not_the_head(corpus):
    tokenizer, windows = corpus
    vocab_size = tokenizer.get_vocab_size()
    # The √D-scaled table (std d^-0.5): the MLM scores are tied to it, and the unscaled table's std 1 starts them
    # √D too large (pre-training is off in the recipe; see benchmarks/README.md).
    model = fresh_encoder(vocab_size, 0, "--embedding-scale")
    before = snapshot(model)
    schedule = Schedule(epochs=3, lr=1e-2, warmup=0.1)
    history = pretrain(model, windows, 10**6, 16, 0.15, schedule, Checkpoints(None), seed=0)
    losses = [epoch["train_loss"] for epoch in history]
    assert [epoch["epoch"] for epoch in history] == [1, 2, 3]
    assert losses[-1] < 0.85 * losses[0] and losses[-1] < math.log(vocab_size) - 0.5  # better than a uniform guess
    after = model.state_dict()
    assert set(after) == set(before)  # the MLM head lives beside the classifier, never inside it
    for name, _ in model.named_parameters():
        if name.startswith("classifier."):
            assert torch.equal(after[name], before[name]), f"pre-training changed the classification head: {name}"
        else:
            assert not torch.equal(after[name], before[name]), f"pre-training left {name} as initialised"


def test_fine_tuning_starts_from_the_pretrained_encoder_with_a_fresh_head(toy_train_args, tmp_path, monkeypatch):
    """Teacher and student start from the encoder as pre-training left it, each with the head its own seed draws."""
    seen = {}
    real_pretrain, real_train_classifier = train_module.pretrain, phases_module.train_classifier

    def recording_pretrain(model, *args, **kwargs):
        seen["initial"] = snapshot(model)
        history = real_pretrain(model, *args, **kwargs)
        seen["pretrained"] = snapshot(model)
        return history

    def recording_teacher(name, model, *args, **kwargs):
        seen[name] = snapshot(model)
        return real_train_classifier(name, model, *args, **kwargs)

    class StudentStarted(Exception):
        pass

    def recording_student(name, model, *args, **kwargs):
        seen[name] = snapshot(model)
        raise StudentStarted

    monkeypatch.setattr(train_module, "pretrain", recording_pretrain)
    monkeypatch.setattr(phases_module, "train_classifier", recording_teacher)
    monkeypatch.setattr(train_module, "train_classifier", recording_student)
    argv = [*toy_train_args, "--output-dir", str(tmp_path / "m"), "--pretrain-epochs", "2", "--teachers", "1"]
    with pytest.raises(StudentStarted):
        main(argv)
    initial, pretrained = seen["initial"], seen["pretrained"]
    encoder = [name for name in initial if not name.startswith("classifier.") and name != "positional_encoding.pe"]
    head = [name for name in initial if name.startswith("classifier.")]
    assert "embedding.weight" in encoder and any(name.startswith("layers.0.") for name in encoder) and head
    for name in encoder:
        assert not torch.equal(pretrained[name], initial[name]), f"{name} was not pre-trained"
    for name in head:
        assert torch.equal(pretrained[name], initial[name]), f"pre-training changed the head: {name}"
    teacher_head = fresh_encoder(initial["embedding.weight"].shape[0], 1).state_dict()  # teacher-1 has seed 1
    for phase, seed_head in (("teacher-1", teacher_head), ("student", initial)):
        start = seen[phase]
        assert set(start) == set(initial), phase
        for name in encoder:
            assert torch.equal(start[name], pretrained[name]), f"{phase}: {name} is not the pre-trained one"
        for name in head:
            assert torch.equal(start[name], seed_head[name]), f"{phase}: {name} is not its seed's fresh head"
    assert not torch.equal(seen["teacher-1"]["classifier.0.weight"], seen["student"]["classifier.0.weight"])


def test_pretraining_resumed_after_its_last_epoch_restores_the_encoder(corpus, tmp_path):
    tokenizer, windows = corpus
    checkpoints = Checkpoints(tmp_path / "checkpoints")
    schedule = Schedule(epochs=2, lr=1e-2, warmup=0.1)
    model = fresh_encoder(tokenizer.get_vocab_size())
    history = pretrain(model, windows, 64, 16, 0.15, schedule, checkpoints, seed=3)
    resumed = fresh_encoder(tokenizer.get_vocab_size())  # as a resumed run builds it: initial weights
    assert not torch.equal(resumed.embedding.weight, model.embedding.weight)
    assert pretrain(resumed, windows, 64, 16, 0.15, schedule, checkpoints, seed=3) == history
    for name, value in model.state_dict().items():
        assert torch.equal(resumed.state_dict()[name], value), name


def padded_batch(lengths: list[int], vocab_size: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    rows = [torch.randint(len(SPECIAL_TOKENS), vocab_size, (n,), generator=generator).tolist() for n in lengths]
    return pad_ids(rows)


def test_mask_tokens_chooses_real_tokens_and_corrupts_them_80_10_10():
    torch.manual_seed(0)
    lengths = [1, 1, 2, 3, *torch.randint(1, 129, (396,)).tolist()]
    input_ids, attention_mask = padded_batch(lengths, vocab_size=1000)
    real = attention_mask.bool()
    corrupted, chosen = mask_tokens(input_ids, attention_mask, vocab_size=1000, rate=0.15)
    assert not chosen[~real].any(), "padding was chosen"
    assert (chosen.sum(dim=1) >= 1).all(), "a row has nothing to predict"
    assert torch.equal(corrupted[~chosen], input_ids[~chosen])  # the rest is left alone, padding included
    count = chosen.sum().item()
    assert count / real.sum().item() == pytest.approx(0.15, abs=0.01)
    masked = (corrupted[chosen] == MASK_ID).sum().item() / count
    kept = (corrupted[chosen] == input_ids[chosen]).sum().item() / count
    assert masked == pytest.approx(0.8, abs=0.02) and kept == pytest.approx(0.1, abs=0.015)
    replaced = chosen & (corrupted != MASK_ID) & (corrupted != input_ids)
    assert (corrupted[replaced] >= len(SPECIAL_TOKENS)).all() and (corrupted[replaced] < 1000).all()


def test_mask_tokens_random_replacements_are_never_special_tokens():
    # A 6-entry vocabulary: 3 specials and 3 words, so a draw that allowed special tokens would hit one often.
    torch.manual_seed(1)
    input_ids, attention_mask = padded_batch(torch.randint(1, 40, (300,)).tolist(), vocab_size=6)
    corrupted, chosen = mask_tokens(input_ids, attention_mask, vocab_size=6, rate=0.5)
    drawn = corrupted[chosen & (corrupted != MASK_ID)]
    assert len(drawn) > 300 and not torch.isin(drawn, torch.tensor([PAD_ID, 1])).any()
    assert corrupted[chosen].ne(MASK_ID).sum() < 0.3 * chosen.sum()  # and most chosen still became [MASK]


def test_mask_tokens_at_rate_zero_still_chooses_one_real_token_a_row():
    input_ids, attention_mask = padded_batch([1, 5, 17, 2], vocab_size=50)
    for seed in range(20):
        torch.manual_seed(seed)
        _, chosen = mask_tokens(input_ids, attention_mask, vocab_size=50, rate=0.0)
        assert chosen.sum(dim=1).tolist() == [1, 1, 1, 1] and not chosen[attention_mask == 0].any()


def test_mlm_loss_predicts_the_original_tokens_with_the_attention_mask(corpus, monkeypatch):
    tokenizer, windows = corpus
    language_model = MaskedLanguageModel(fresh_encoder(tokenizer.get_vocab_size()))
    calls, targets = [], []
    language_model.register_forward_hook(
        lambda module, args, kwargs, output: calls.append((args, kwargs)), with_kwargs=True
    )
    cross_entropy = torch.nn.functional.cross_entropy

    def recording_cross_entropy(scores, target, *args, **kwargs):
        targets.append(target)
        return cross_entropy(scores, target, *args, **kwargs)

    monkeypatch.setattr(torch.nn.functional, "cross_entropy", recording_cross_entropy)
    rows = [0, 5, 9, 30]  # windows of different lengths: the batch is padded
    assert len({len(windows[i]) for i in rows}) > 1
    torch.manual_seed(0)
    loss = mlm_loss(language_model, windows, rows, rate=0.15)
    original, attention_mask = pad_ids([windows[i] for i in rows])
    args, kwargs = calls[0]
    given = inspect.signature(MaskedLanguageModel.forward).bind(language_model, *args, **kwargs).arguments
    corrupted, mask_given, selected = given["input_ids"], given["attention_mask"], given["selected"]
    assert torch.equal(mask_given, attention_mask), "the MLM forward did not get the attention mask"
    assert torch.equal(targets[0], original[selected]), "the targets are not the original tokens"
    assert (corrupted[selected] != original[selected]).any() and torch.isfinite(loss)


def test_mlm_scores_of_a_padded_row_equal_the_row_alone(corpus):
    tokenizer, windows = corpus
    language_model = MaskedLanguageModel(fresh_encoder(tokenizer.get_vocab_size())).eval()
    short, long = windows[0][:5], windows[1]
    input_ids, attention_mask = pad_ids([short, long])
    selected = attention_mask.bool()
    with torch.no_grad():
        batched = language_model(input_ids, attention_mask, selected)  # (5 + len(long), V)
        alone = language_model(torch.tensor([short]), torch.ones(1, 5, dtype=torch.long), torch.ones(1, 5).bool())
    torch.testing.assert_close(batched[:5], alone, atol=1e-5, rtol=1e-5)
