"""Compare with a second model in Chromium: the page laid out with a tiny BERT beside the app's tiny model opens
from an address on a head only the BERT has, draws each model's figures, and keeps a new head in the address."""

from urllib.parse import parse_qs, urlparse

import pytest
from conftest import serving_app
from hub_checkpoints import write_deeper_bert
from test_browser import wait_for_text

from transformer.explorer import runner
from transformer.loading import load_model

pytestmark = [
    pytest.mark.served,
    pytest.mark.browser,  # ``browser`` and ``page`` (tests/conftest.py) skip where Chromium is missing
    pytest.mark.filterwarnings("ignore:'future.no_silent_downcasting' is deprecated"),  # gradio's queue and pandas 3
    pytest.mark.filterwarnings("ignore:The copy keyword is deprecated"),
]


@pytest.fixture(scope="module")
def url(app, tmp_path_factory):
    """The page built and served with a 3-layer, 4-head BERT as its second model (the app's has 2 of 2)."""
    second = load_model(write_deeper_bert(tmp_path_factory.mktemp("bert-3x4")), device="cpu")
    with pytest.MonkeyPatch.context() as patch:
        for module in (runner, app):  # app.py imports the name for its status line
            patch.setattr(module, "get_second_model", lambda: (second, None))
        patch.setattr(app, "demo", app.build_demo())
        with serving_app(app) as served:
            yield served


def test_an_address_opens_both_models_on_a_head_only_one_has(page, url):
    page.goto(f"{url}?text=a wonderful film&view=compare&compare_layer=3&compare_head=4")
    wait_for_text(page, "#compare-heatmap-b", "Model B, layer 3, head 4", "[CLS]", "wonderful")
    wait_for_text(page, "#compare-heatmap-a", "Model A has no layer 3, head 4")
    wait_for_text(page, "#compare-summary", "3 layers of 4 heads", "2 layers of 2 heads")
    wait_for_text(page, "#compare-attributions-a", "Model A's attributions", "wonderful")
    wait_for_text(page, "#compare-attributions-b", "Model B's attributions", "[SEP]")
    wait_for_text(page, "#compare-text-b", "Model B: Integrated Gradients", "wonderful")
    assert "%" in page.locator("#compare-a").text_content() and "%" in page.locator("#compare-b").text_content()
    assert "Model B (Compare)" in page.locator("#model-status").text_content()

    page.locator("#compare-layer").get_by_label("2").check()
    page.locator("#compare-head").get_by_label("1").check()
    wait_for_text(page, "#compare-heatmap-a", "Model A, layer 2, head 1")
    wait_for_text(page, "#compare-heatmap-b", "Model B, layer 2, head 1")
    query = parse_qs(urlparse(page.evaluate("() => window.location.href")).query)
    assert (query["view"], query["compare_layer"], query["compare_head"]) == (["compare"], ["2"], ["1"])
