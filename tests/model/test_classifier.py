"""The classifier: the tutorial's check, padding correctness, word order, save/load."""

import functools
import json
import math
import threading

import pytest
import torch
from safetensors.torch import save_file
from tiny import tiny_model as shared_tiny_model

from transformer import TransformerClassifier
from transformer.train import build_parser

tiny_model = functools.partial(shared_tiny_model, vocab_size=30, max_len=16)


def test_tutorial_end_to_end_check():
    # Tutorial section 7: vocab 10,000, 2 classes, batch 8, length 32, d_model 128, 4 heads, 2 layers.
    torch.manual_seed(42)
    model = TransformerClassifier(vocab_size=10_000, num_classes=2, d_model=128, num_heads=4, num_layers=2)
    input_ids = torch.randint(1, 10_000, (8, 32))
    labels = torch.randint(0, 2, (8,))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    logits = model(input_ids)
    assert logits.shape == (8, 2)
    loss = torch.nn.functional.cross_entropy(logits, labels)
    assert loss.item() == pytest.approx(math.log(2), abs=0.05)  # the tutorial prints 0.6931
    before = model.embedding.weight.detach().clone()
    loss.backward()
    optimizer.step()
    assert not torch.equal(before, model.embedding.weight)


def test_the_default_architecture_is_the_tutorials_code_path():
    model = TransformerClassifier(vocab_size=100, num_classes=2, d_model=32, num_heads=2, num_layers=1, d_ff=128)
    ids = torch.tensor([[3, 7, 9]])
    torch.testing.assert_close(model.token_embeddings(ids), model.embedding(ids))  # x = embedding(ids): no ×√D
    head = [type(layer) for layer in model.classifier]
    assert head == [torch.nn.Linear, torch.nn.ReLU, torch.nn.Dropout, torch.nn.Linear]
    defaults = TransformerClassifier(vocab_size=100, num_classes=2)  # the tutorial's class defaults
    assert (defaults.d_model, defaults.num_heads, defaults.num_layers, defaults.max_len) == (256, 4, 3, 256)
    assert defaults.layers[0].feed_forward.linear1.out_features == 512
    recipe = build_parser().parse_args([])  # the tutorial's end-to-end configuration, d_ff = 4 × d_model
    assert (recipe.d_model, recipe.num_heads, recipe.num_layers) == (128, 4, 2)
    assert recipe.d_ff == 4 * recipe.d_model and recipe.max_len >= 256
    assert not recipe.embedding_scale and recipe.head_activation == "relu"


def test_the_old_deviations_are_named_options():
    model = tiny_model(embedding_scale=True, head_activation="gelu")
    ids = torch.tensor([[3, 7, 9]])
    torch.testing.assert_close(model.token_embeddings(ids), model.embedding(ids) * math.sqrt(16))
    assert isinstance(model.classifier[1], torch.nn.GELU)
    with pytest.raises(ValueError, match="head_activation must be one of relu, gelu"):
        tiny_model(head_activation="tanh")


def test_a_checkpoint_from_before_the_options_loads_as_it_was_trained(tmp_path):
    old = tiny_model(seed=3, embedding_scale=True, head_activation="gelu")
    old.save_pretrained(tmp_path)
    config = json.loads((tmp_path / "config.json").read_text())
    assert config["embedding_scale"] is True and config["head_activation"] == "gelu"  # new files say it
    for key in ("embedding_scale", "head_activation"):  # a file written before the keys existed
        del config[key]
    (tmp_path / "config.json").write_text(json.dumps(config))
    ids = torch.randint(1, 30, (3, 8))
    saved_logits = old(ids)
    loaded = TransformerClassifier.from_pretrained(tmp_path).eval()
    assert loaded.embedding_scale and loaded.head_activation == "gelu"
    torch.testing.assert_close(loaded(ids), saved_logits, atol=0, rtol=0)
    as_new = tiny_model(seed=3)  # the same weights read as today's architecture give other logits
    as_new.load_state_dict(old.state_dict())
    assert not torch.allclose(as_new(ids), saved_logits, atol=1e-3)


def test_a_new_checkpoint_keeps_its_own_settings(tmp_path):
    model = tiny_model()
    model.save_pretrained(tmp_path)
    config = json.loads((tmp_path / "config.json").read_text())
    assert config["embedding_scale"] is False and config["head_activation"] == "relu"
    loaded = TransformerClassifier.from_pretrained(tmp_path).eval()
    assert not loaded.embedding_scale and loaded.head_activation == "relu"
    ids = torch.randint(1, 30, (3, 8))
    torch.testing.assert_close(loaded(ids), model(ids), atol=0, rtol=0)


def test_padding_is_invisible():
    model = tiny_model()
    sentence = torch.tensor([[5, 9, 3, 7]])
    alone, alone_att = model(sentence, output_attentions=True)
    batch = torch.tensor([[5, 9, 3, 7, 0, 0, 0], [4, 4, 8, 1, 2, 6, 3]])
    mask = torch.tensor([[1, 1, 1, 1, 0, 0, 0], [1] * 7])
    for capture in (False, True):
        out = model(batch, mask, output_attentions=capture)
        logits = out[0] if capture else out
        torch.testing.assert_close(logits[0], alone[0], atol=1e-5, rtol=0)
    _, attentions = model(batch, mask, output_attentions=True)
    for layer, reference in zip(attentions, alone_att, strict=True):
        assert layer[0, :, :, 4:].abs().max() == 0  # padded keys get exactly zero weight
        torch.testing.assert_close(layer[0, :, :4, :4], reference[0], atol=1e-6, rtol=0)
        torch.testing.assert_close(layer.sum(-1), torch.ones_like(layer.sum(-1)))


def test_attention_capture_does_not_change_logits_and_has_bertviz_format():
    model = tiny_model(num_layers=3)
    ids = torch.randint(1, 30, (2, 9))
    plain = model(ids)
    logits, attentions = model(ids, output_attentions=True)
    torch.testing.assert_close(plain, logits, atol=1e-6, rtol=1e-5)
    assert isinstance(attentions, tuple) and len(attentions) == 3
    assert all(a.shape == (2, 2, 9, 9) for a in attentions)


def test_no_state_is_kept_between_calls():
    model = tiny_model()
    inputs = [torch.randint(1, 30, (1, n)) for n in (3, 11)]
    expected = [model(ids, output_attentions=True) for ids in inputs]
    before = {name: dict(vars(module)) for name, module in model.named_modules()}
    results = [None, None]

    def run(i):
        for _ in range(20):
            results[i] = model(inputs[i], output_attentions=True)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for (logits, att), (ref_logits, ref_att) in zip(results, expected, strict=True):
        torch.testing.assert_close(logits, ref_logits)
        assert att[0].shape == ref_att[0].shape
    assert {name: dict(vars(module)) for name, module in model.named_modules()}.keys() == before.keys()
    for name, module in model.named_modules():
        assert vars(module).keys() == before[name].keys(), f"{name} gained attributes during forward"


def test_without_positional_encoding_word_order_is_invisible():
    vocab = {w: i for i, w in enumerate(["[PAD]", "the", "dog", "bit", "man"])}
    a = torch.tensor([[vocab[w] for w in ["the", "dog", "bit", "the", "man"]]])
    b = torch.tensor([[vocab[w] for w in ["the", "man", "bit", "the", "dog"]]])
    no_pe = tiny_model(use_positional_encoding=False)
    torch.testing.assert_close(no_pe(a), no_pe(b), atol=1e-6, rtol=0)
    with_pe = tiny_model()
    assert not torch.allclose(with_pe(a), with_pe(b), atol=1e-4)
    # The per-call switch gives the same answer as the constructor switch.
    torch.testing.assert_close(with_pe(a, positional_encoding=False), with_pe(b, positional_encoding=False))


def test_post_ln_uses_the_same_weights_layout():
    pre, post = tiny_model(), tiny_model(norm_first=False)
    assert pre.state_dict().keys() == post.state_dict().keys()
    post.load_state_dict(pre.state_dict())
    assert not torch.allclose(pre(torch.tensor([[1, 2, 3]])), post(torch.tensor([[1, 2, 3]])))


def test_save_load_round_trip(tmp_path):
    model = tiny_model(label_names=["negative", "positive"])
    model.save_pretrained(tmp_path)
    assert {"config.json", "model.safetensors"} <= {p.name for p in tmp_path.iterdir()}
    config = json.loads((tmp_path / "config.json").read_text())
    assert config["d_model"] == 16 and config["label_names"] == ["negative", "positive"]
    loaded = TransformerClassifier.from_pretrained(tmp_path).eval()
    ids = torch.randint(1, 30, (3, 8))
    assert torch.equal(model(ids), loaded(ids))
    assert loaded.label_names == ["negative", "positive"]


def test_wrong_shapes_fail_clearly(tmp_path):
    tiny_model().save_pretrained(tmp_path)
    config = json.loads((tmp_path / "config.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps(config | {"d_model": 32, "d_ff": 64}))
    expected = r"do not match config\.json: 3\d tensors have other shapes \(e\.g\. classifier\.0\.bias is \(8,\)"
    with pytest.raises(ValueError, match=expected):
        TransformerClassifier.from_pretrained(tmp_path)


def test_missing_or_extra_weights_fail(tmp_path):
    state = tiny_model().state_dict()
    tiny_model().save_pretrained(tmp_path)
    save_file({k: v for k, v in state.items() if not k.startswith("norm.")}, tmp_path / "model.safetensors")
    with pytest.raises(ValueError, match=r"missing: norm\.bias, norm\.weight"):
        TransformerClassifier.from_pretrained(tmp_path)


def test_never_unpickles(tmp_path):
    model = tiny_model()
    model.save_pretrained(tmp_path)
    (tmp_path / "model.safetensors").unlink()
    torch.save(model.state_dict(), tmp_path / "pytorch_model.bin")
    with pytest.raises(FileNotFoundError, match=r"no model\.safetensors"):
        TransformerClassifier.from_pretrained(tmp_path)


def test_corrupt_weights_fail_clearly(tmp_path):
    tiny_model().save_pretrained(tmp_path)
    (tmp_path / "model.safetensors").write_bytes(b"not a safetensors file")
    with pytest.raises(ValueError, match="not a readable safetensors file"):
        TransformerClassifier.from_pretrained(tmp_path)
