"""The Attributions tab's numbers (transformer.explorer.views.attributions.attribution_view) for a model that reads
its first token: the agreement's attention and rollout are read for [CLS], as the model pools, not the mean."""

import numpy as np
import pytest
from tiny import tiny_model

from transformer.explorer.analysis import analyze
from transformer.explorer.inputs import PREDICTED
from transformer.explorer.views.attributions import attribution_view


@pytest.mark.parametrize("pooling", ["first", "mean"])
def test_the_agreement_reads_attention_and_rollout_as_the_model_pools(tiny_tokenizer, pooling):
    model = tiny_model(vocab_size=tiny_tokenizer.get_vocab_size(), max_len=64)
    model.pooling = pooling  # a Hub classifier's "first"; the maths below reads only this attribute
    result = analyze(model, tiny_tokenizer, "a wonderful film , the acting was dull")
    view = attribution_view(model, tiny_tokenizer, result, PREDICTED, steps=4)
    last = result.attentions[-1].mean(axis=0)  # (N, N): the last layer's head-averaged weights
    rollout = np.eye(len(result.tokens))
    for layer in result.attentions:  # Abnar & Zuidema: 0.5 A + 0.5 I, rows renormalised, multiplied up
        mixed = 0.5 * layer.mean(axis=0) + 0.5 * np.eye(len(result.tokens))
        rollout = (mixed / mixed.sum(axis=-1, keepdims=True)) @ rollout
    read = (lambda m: m[0]) if pooling == "first" else (lambda m: m.mean(axis=0))
    assert np.allclose(view.agreement.scores[0].numpy(), read(last), atol=1e-6)
    assert np.allclose(view.agreement.scores[1].numpy(), read(rollout), atol=1e-5)
    assert not np.allclose(last[0], last.mean(axis=0), atol=1e-3)  # the two readings differ on this sentence
