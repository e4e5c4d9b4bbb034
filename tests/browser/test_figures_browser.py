"""The heaviest figures in Chromium (issue 37): every head of a model with DistilBERT-base's 6 × 12 heads at 512 tokens
draws as one heatmap image on one pair of axes, and one 512-token map in blocks; drawn by the plotly.js the plotly
package ships (Gradio's page bundles its own build of the same library)."""

from pathlib import Path

import numpy as np
import plotly
import pytest

from transformer.explorer.drawing import attention_maps

pytestmark = pytest.mark.browser
PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
N = 512
DRAW = """async (json) => {
  const figure = JSON.parse(json), plot = document.getElementById("plot");
  await Plotly.newPlot(plot, figure.data, figure.layout);
  return {
    images: plot.querySelectorAll(".heatmaplayer image").length,
    subplots: plot.querySelectorAll(".cartesianlayer > .subplot").length,
    xticks: [...plot.querySelectorAll(".xtick text")].map((tick) => tick.textContent),
  };
}"""


@pytest.fixture
def plot_page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_content('<div id="plot"></div>')
    page.add_script_tag(path=str(PLOTLY_JS))
    yield page
    context.close()


def random_attention(*shape: int) -> np.ndarray:
    weights = np.random.default_rng(0).random(shape, dtype=np.float32)
    return weights / weights.sum(axis=-1, keepdims=True)


def test_every_head_of_a_real_size_model_draws_as_one_image(plot_page):
    tokens = [f"t{i}" for i in range(N)]
    drawn = plot_page.evaluate(DRAW, attention_maps.attention_grid(tokens, random_attention(6, 12, N, N)).to_json())
    assert drawn["images"] == 1 and drawn["subplots"] == 1  # a subplot a head would be 72 of each
    assert drawn["xticks"] == [f"head {h}" for h in range(1, 13)]


def test_a_512_token_map_draws_in_blocks(plot_page):
    tokens = ["<b>x</b>", *(f"t{i}" for i in range(1, N))]
    figure = attention_maps.attention_heatmap(tokens, random_attention(N, N), "one head")
    drawn = plot_page.evaluate(DRAW, figure.to_json())
    assert drawn["images"] == 1 and drawn["subplots"] == 1
    assert drawn["xticks"][0] == "0–1 <b>x</b>…"  # the typed markup shown as text, not drawn bold
    assert len(drawn["xticks"]) <= attention_maps.MAX_DRAWN_CELLS // 2  # 256 blocks, every fourth labelled by plotly
