"""The Token-embeddings view: PCA maps of every stage, deterministic, escaped, and drawn in Chromium; the stages are
the model's ``hidden_states``, the tutorial's embedding and blocks or a Hub model's ``output_hidden_states``."""

import gradio as gr
import pytest
import torch
import transformers
from app_fixtures import MARKUP
from tiny import tiny_model

from transformer.explain import embedding_map
from transformer.explorer import analysis
from transformer.explorer.views import token_embeddings
from transformer.loading import load_model

SENTENCE = "a wonderful film , the acting was dull"


def test_principal_map_matches_the_svd_and_fixes_each_sign():
    points = torch.randn(7, 5, generator=torch.Generator().manual_seed(0))
    coordinates, explained = embedding_map.principal_map(points)
    centred = points - points.mean(dim=0)
    _, s, vh = torch.linalg.svd(centred.double(), full_matrices=False)
    expected = (centred.double() @ vh[:2].T).float()  # (N, 2), up to each column's sign
    torch.testing.assert_close(coordinates.abs(), expected.abs(), rtol=1e-4, atol=1e-5)
    assert all(column[column.abs().argmax()] > 0 for column in coordinates.T)  # the largest coordinate is positive
    torch.testing.assert_close(explained, (s[:2] ** 2 / (s**2).sum()).float())
    flipped, _ = embedding_map.principal_map(-points)  # the same cloud mirrored: the same map
    torch.testing.assert_close(flipped, coordinates, rtol=1e-4, atol=1e-5)


def test_one_token_maps_to_the_origin():
    coordinates, explained = embedding_map.principal_map(torch.ones(1, 4))
    assert coordinates.shape == (1, 2) and not coordinates.any() and not explained.any()


def test_the_view_has_a_map_per_stage_and_starts_from_the_embeddings(model, tokenizer):
    result = analysis.analyze(model, tokenizer, SENTENCE)
    view = token_embeddings.embeddings_view(model, tokenizer, result)
    n = len(result.tokens)
    assert view.coordinates.shape == (model.num_layers + 1, n, 2)
    with torch.no_grad():
        first = embedding_map.principal_map(model.embed(analysis.sentence_ids(model, result))[0])[0]
    torch.testing.assert_close(view.coordinates[0], first)
    torch.testing.assert_close(view.coordinates.mean(dim=1), torch.zeros(model.num_layers + 1, 2), atol=1e-4, rtol=0)
    assert ((view.spread > -1) & (view.spread <= 1 + 1e-6)).all()


def by_hand(model, ids, attention_mask=None, head_mask=None):
    """The tutorial model's stream as the view used to compute it: ``embed``, then each block, a mask as in forward.

    Shape:
        ids, attention_mask: (B, N); head_mask: (L, H). Returns L + 1 tensors (B, N, D).
    """
    mask = None if attention_mask is None else attention_mask.bool()[:, None, None, :]  # (B, 1, 1, N)
    x = model.embed(ids)  # (B, N, D)
    states = [x]
    for i, block in enumerate(model.layers):
        x, _ = block(x, mask, False, None if head_mask is None else head_mask[i])
        states.append(x)
    return states


@torch.no_grad()
def test_the_tutorial_models_hidden_states_are_its_embedding_then_each_block():
    model = tiny_model()
    ids = torch.tensor([[5, 9, 12, 7, 30], [8, 21, 40, 0, 0]])  # the second row right-padded
    mask = (ids != model.pad_token_id).long()  # 1 = token, 0 = padding
    knocked = torch.ones(model.num_layers, model.num_heads)
    knocked[0, 1] = 0
    states = model.hidden_states(ids, mask, head_mask=knocked)
    assert len(states) == model.num_layers + 1 and all(state.shape == (2, 5, model.d_model) for state in states)
    for got, expected in zip(states, by_hand(model, ids, mask, knocked), strict=True):
        torch.testing.assert_close(got, expected)
    torch.testing.assert_close(states[0], model.embed(ids))  # the first stage enters block 1
    unpadded = model.hidden_states(ids[1:, :3], head_mask=knocked)[-1]  # (1, 3, D): the padded sentence alone
    torch.testing.assert_close(states[-1][1:, :3], unpadded)  # its tokens never see the padding
    assert not torch.allclose(model.hidden_states(ids[1:, :3])[-1], unpadded, atol=1e-4)  # the knockout counts
    pooled = model.norm(model.hidden_states(ids[:1])[-1]).mean(dim=1)  # (1, D): the last stage is what pooling reads
    torch.testing.assert_close(model.classifier(pooled), model(ids[:1]))
    without = model.hidden_states(ids, positional_encoding=False)[0]
    torch.testing.assert_close(without, model.token_embeddings(ids))  # eval mode: no dropout, no positions


@pytest.fixture(scope="module", params=["bert", "distilbert", "roberta"])
def hub(request, hub_model_dirs):
    """(the LoadedModel of one Hub family's tiny folder, the raw transformers model from the same folder)."""
    folder = hub_model_dirs[request.param]
    raw = transformers.AutoModelForSequenceClassification.from_pretrained(folder, attn_implementation="eager")
    return load_model(folder, device="cpu"), raw.eval()


def embedding_layer(embeddings, ids: torch.Tensor, offset: int) -> torch.Tensor:
    """A BERT-style embedding layer by hand: word + position (+ token type 0) embeddings, then its LayerNorm.

    Shape:
        ids: (1, N). Returns (1, N, D).
    """
    positions = torch.arange(ids.size(1))[None] + offset  # (1, N); RoBERTa's start after its pad id
    x = embeddings.word_embeddings(ids) + embeddings.position_embeddings(positions)  # (1, N, D)
    if hasattr(embeddings, "token_type_embeddings"):  # BERT and RoBERTa; DistilBERT has none
        x = x + embeddings.token_type_embeddings(torch.zeros_like(ids))
    return embeddings.LayerNorm(x)


@torch.no_grad()
def test_a_hub_models_hidden_states_are_the_raw_models(hub):
    loaded, raw = hub
    model = loaded.model
    ids = torch.tensor([loaded.tokenizer.encode(SENTENCE).ids])  # (1, N), [CLS]/<s> and [SEP]/</s> included
    states = model.hidden_states(ids)
    expected = raw(input_ids=ids, output_hidden_states=True, return_dict=True).hidden_states
    assert len(states) == len(expected) == model.num_layers + 1
    for got, theirs in zip(states, expected, strict=True):
        assert got.shape == (1, ids.size(1), model.d_model)
        torch.testing.assert_close(got, theirs)
    torch.testing.assert_close(states[0], embedding_layer(model.base.embeddings, ids, model.position_offset))
    assert not torch.allclose(states[-1], states[0], atol=1e-3)  # the layers move the tokens
    knocked = torch.ones(model.num_layers, model.num_heads)
    knocked[0] = 0
    assert not torch.allclose(model.hidden_states(ids, head_mask=knocked)[-1], states[-1], atol=1e-4)
    assert not torch.allclose(model.hidden_states(ids, positional_encoding=False)[0], states[0], atol=1e-4)


def test_the_view_draws_a_hub_model_with_its_special_tokens(hub):
    loaded, _ = hub
    model = loaded.model
    result = analysis.analyze(model, loaded.tokenizer, SENTENCE)
    view = token_embeddings.embeddings_view(model, loaded.tokenizer, result)
    n = len(result.tokens)
    assert result.tokens[0] in ("[CLS]", "<s>") and view.tokens == result.tokens
    assert view.coordinates.shape == (model.num_layers + 1, n, 2) and view.explained.shape == (model.num_layers + 1, 2)
    with torch.no_grad():
        first = model.base.embeddings(input_ids=analysis.sentence_ids(model, result))[0]  # (N, D)
    torch.testing.assert_close(view.coordinates[0], embedding_map.principal_map(first)[0])
    assert len(token_embeddings.embeddings_figure(view).data) == model.num_layers + 1


def test_the_introduction_says_what_the_first_stage_is(hub):
    ours = token_embeddings.explanation(tiny_model())
    assert "its embedding plus positional encoding" in ours and "LayerNorm" not in ours
    assert "adds no positional encoding" in token_embeddings.explanation(tiny_model(use_positional_encoding=False))
    theirs = token_embeddings.explanation(hub[0].model)
    assert "embedding layer's output" in theirs and "then a LayerNorm" in theirs and "`<s>`" in theirs
    assert "positional encoding" not in theirs


def test_the_figure_escapes_token_labels(model, tokenizer):
    result = analysis.analyze(model, tokenizer, MARKUP)
    figure = token_embeddings.embeddings_figure(token_embeddings.embeddings_view(model, tokenizer, result))
    assert len(figure.data) == model.num_layers + 1
    labels = list(figure.data[0].text)
    assert "0 &lt;" in labels and not any("<" in label for label in labels)


def test_the_figure_has_a_colour_key_and_room_above_its_points_for_their_labels():
    view = token_embeddings.EmbeddingsView(
        tokens=["a", "b", "c"],
        coordinates=torch.tensor([[[0.0, 0.0], [1.0, 2.0], [2.0, 1.0]]] * 2),
        explained=torch.full((2, 2), 0.4),
        spread=torch.ones(2),
    )
    figure = token_embeddings.embeddings_figure(view)
    keys = [trace for trace in figure.data if trace.marker.showscale]
    assert len(keys) == 1 and "position" in keys[0].marker.colorbar.title.text  # one key for every stage
    assert (keys[0].marker.cmin, keys[0].marker.cmax) == (0, 2)
    for axis in (figure.layout.yaxis, figure.layout.yaxis2):
        low, high = axis.range
        assert high - 2.0 >= 0.25 * 2.0 and low < 0.0  # the top point's label stays inside its plot, under the title


@pytest.mark.served
@pytest.mark.browser
def test_the_tab_draws_a_map_per_stage_in_chromium(browser, url):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.set_default_timeout(30_000)
        page.goto(f"{url}?text={SENTENCE}&view=token-embeddings")
        page.wait_for_function(
            """() => {
                const plot = document.querySelector('#embeddings-plot');
                return plot?.querySelectorAll('.scatterlayer .trace').length === 3
                    && plot.textContent.includes('after layer 2') && plot.textContent.includes('wonderful');
            }"""
        )
        assert "cosine similarity" in page.locator("#embeddings-summary").text_content()
        assert "view=token-embeddings" in page.evaluate("() => window.location.href")
    finally:
        context.close()


def test_a_text_of_one_token_says_so_instead_of_three_empty_maps(model, tokenizer):
    """Issue 53: one token drew "PC1+PC2 0 %" over three empty maps."""
    one = analysis.analyze(model, tokenizer, "film")
    assert len(one.tokens) == 1
    said, shown, _ = token_embeddings.show_embeddings(one, None)
    assert "one token" in said and shown == gr.update(value=None, visible=False)
