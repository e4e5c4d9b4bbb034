"""The Token-embeddings view: PCA maps of every stage, deterministic, escaped, and drawn in Chromium."""

import pytest
import torch
from app_fixtures import MARKUP

from transformer.explorer import analysis
from transformer.explorer.views import token_embeddings

SENTENCE = "a wonderful film , the acting was dull"


def test_principal_map_matches_the_svd_and_fixes_each_sign():
    points = torch.randn(7, 5, generator=torch.Generator().manual_seed(0))
    coordinates, explained = token_embeddings.principal_map(points)
    centred = points - points.mean(dim=0)
    _, s, vh = torch.linalg.svd(centred.double(), full_matrices=False)
    expected = (centred.double() @ vh[:2].T).float()  # (N, 2), up to each column's sign
    torch.testing.assert_close(coordinates.abs(), expected.abs(), rtol=1e-4, atol=1e-5)
    assert all(column[column.abs().argmax()] > 0 for column in coordinates.T)  # the largest coordinate is positive
    torch.testing.assert_close(explained, (s[:2] ** 2 / (s**2).sum()).float())
    flipped, _ = token_embeddings.principal_map(-points)  # the same cloud mirrored: the same map
    torch.testing.assert_close(flipped, coordinates, rtol=1e-4, atol=1e-5)


def test_one_token_maps_to_the_origin():
    coordinates, explained = token_embeddings.principal_map(torch.ones(1, 4))
    assert coordinates.shape == (1, 2) and not coordinates.any() and not explained.any()


def test_the_view_has_a_map_per_stage_and_starts_from_the_embeddings(model, tokenizer):
    result = analysis.analyze(model, tokenizer, SENTENCE)
    view = token_embeddings.embeddings_view(model, tokenizer, result)
    n = len(result.tokens)
    assert view.coordinates.shape == (model.num_layers + 1, n, 2)
    with torch.no_grad():
        first = token_embeddings.principal_map(model.embed(analysis.sentence_ids(model, result))[0])[0]
    torch.testing.assert_close(view.coordinates[0], first)
    torch.testing.assert_close(view.coordinates.mean(dim=1), torch.zeros(model.num_layers + 1, 2), atol=1e-4, rtol=0)
    assert ((view.spread > -1) & (view.spread <= 1 + 1e-6)).all()


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
