"""The Head-atlas and Errors tabs in Chromium: a head's row opens it in the Attention tab, an error's row opens
its sentence, and the page address follows both. The tiny model gets its files from a tiny data folder."""

from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from test_head_atlas import write_gz

from transformer.explorer import artifacts, corpus
from transformer.explorer.views import errors, head_atlas

CHROMIUM = "/usr/bin/chromium"
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"no Chromium at {CHROMIUM} (apt-get install chromium)"),
    pytest.mark.filterwarnings("ignore:'future.no_silent_downcasting' is deprecated"),  # gradio's queue and pandas 3
    pytest.mark.filterwarnings("ignore:The copy keyword is deprecated"),
]
sync_api = pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def url(app, tmp_path_factory):
    """The app with head_atlas.json and errors.json written next to its tiny model, served on a free port."""
    from app_fixtures import serving

    data = tmp_path_factory.mktemp("corpus")
    (data / "sst2").mkdir()
    lines = ["a charming and often affecting journey .", "the movie is n't funny", "a wonderful film", "dull"]
    (data / "sst2" / "glue_dev.tsv").write_text(
        "sentence\tlabel\n" + "".join(f"{text}\t{i % 2}\n" for i, text in enumerate(lines)), encoding="utf-8"
    )
    for name in ("yelp", "pros_cons", "tweets"):
        write_gz(data / name / "dev.tsv.gz", [(f"the {name} was great , and dull {i}", i % 2) for i in range(6)])
    loaded = app.get_model()[0]
    sha = artifacts.model_hash(loaded.folder)
    sets = corpus.dev_sets(data)
    built = artifacts.build_atlas(loaded.model, loaded.tokenizer, corpus.reference_corpus(sets, 12), sha)
    artifacts.write_artifact(loaded.folder, artifacts.ATLAS_FILE, built)
    artifacts.write_artifact(
        loaded.folder, artifacts.ERRORS_FILE, artifacts.build_errors(loaded.model, loaded.tokenizer, sets, sha)
    )
    for cached in (head_atlas.model_identity, head_atlas._stored, errors.model_errors):
        cached.cache_clear()
    with serving(app.demo) as served:
        yield served


@pytest.fixture
def page(url):
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.set_default_timeout(60_000)
        yield page
        browser.close()


def query(page) -> dict:
    return parse_qs(urlparse(page.evaluate("() => window.location.href")).query)


def test_clicking_a_head_in_the_atlas_opens_it_in_the_attention_tab(page, url):
    page.goto(f"{url}?text=a wonderful film&view=head-atlas")
    page.wait_for_function("() => document.querySelector('#atlas-table')?.textContent.includes('L2 H2')")
    assert "Role rule" in page.locator("#atlas-summary").text_content()
    page.locator("#atlas-table").get_by_text("L2 H2", exact=True).click()
    page.wait_for_function(
        "() => document.querySelector('#attention-heatmap')?.textContent.includes('Layer 2, head 2')"
    )
    assert page.get_by_role("tab", name="Attention").get_attribute("aria-selected") == "true"
    page.wait_for_function("() => new URL(location.href).searchParams.get('head') === '2'")
    assert query(page)["layer"] == ["2"] and query(page)["text"] == ["a wonderful film"]


def test_clicking_an_error_opens_its_sentence_and_the_address_holds_it(page, url):
    page.goto(f"{url}?view=errors")
    page.wait_for_function("() => document.querySelector('#errors-summary')?.textContent.includes('Wrong predictions')")
    first = errors.model_errors()["errors"][0]["text"]
    page.locator("#errors-table").get_by_text(first, exact=True).first.click()
    page.wait_for_function("(t) => document.querySelector('#sentence textarea').value === t", arg=first)
    page.wait_for_function("(t) => new URL(location.href).searchParams.get('text') === t", arg=first)
    page.wait_for_function(
        "(w) => document.querySelector('#attention-heatmap')?.textContent.includes(w)", arg=first.split()[0]
    )
    assert page.get_by_role("tab", name="Attention").get_attribute("aria-selected") == "true"
