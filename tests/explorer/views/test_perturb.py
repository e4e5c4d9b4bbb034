"""The Perturb tab (transformer.explorer.views.perturb): ``/perturb`` changes one token, and the tab offers this
sentence's tokens."""

import pytest
import torch
from app_fixtures import SENTENCE, close

from transformer import explain
from transformer.explorer import views
from transformer.tokenizer import MASK_TOKEN


@pytest.mark.parametrize("mode", ["mask", "remove"])
def test_perturb_endpoint_changes_one_token(app, loaded, result, mode):
    answer = views.perturb.perturb(SENTENCE, position=1, mode=mode)
    ids = result.token_ids
    mask_id = loaded.tokenizer.token_to_id(MASK_TOKEN)
    changed = ids[:1] + ids[2:] if mode == "remove" else [ids[0], mask_id, *ids[2:]]
    after = explain.predict(loaded.model, torch.tensor([changed])).probs
    close(answer["probabilities_after"], after)
    close(answer["change"], after - torch.tensor(result.probabilities))
    assert answer["tokens_after"][1] == (result.tokens[2] if mode == "remove" else MASK_TOKEN)


def test_perturbation_and_head_tabs_offer_this_sentences_tokens(app, result):
    _, summary, choices, _ = views.perturb.show_perturbation(
        result, 99, "mask", None
    )  # a choice kept from a longer text
    assert choices["value"] == 0 and [label for label, _ in choices["choices"]][:2] == ["0 a", "1 wonderful"]
    assert "[MASK]" in summary
