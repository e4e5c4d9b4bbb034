"""The shipped checkpoint in assets/model: complete, small, loadable, and as accurate as its metrics say.

The checks on the data sets need the data folder laid out as ``../shared/data/README.md`` describes:
``$SENTIMENT_DATA_DIR``, by default ``../shared/data`` beside the repository; they are skipped, saying so,
where it is absent. The hand-written files in ``benchmarks/`` are committed, so their checks always run.
"""

import json
import re
from pathlib import Path

import pytest
import yaml
from app_fixtures import USER_DATA_DIR
from conftest import SOURCES

from transformer.behaviour import build_suite, run_suite, summarise
from transformer.loading import DEFAULT_MODEL_DIR, load_model
from transformer.tokenizer import UNK_ID
from transformer.training.data import read_labelled
from transformer.training.mixture import read_dev_sets, read_test_sets
from transformer.training.model_card import render_model_card
from transformer.training.scoring import accuracy, positive_probabilities, predicted_classes

REPO_ROOT = Path(__file__).resolve().parents[2]
DATA_DIR = USER_DATA_DIR  # $SENTIMENT_DATA_DIR as the caller set it (app_fixtures hides it from the app)
MAX_BYTES = 25 * 1000 * 1000  # the size limit the project set for assets/model
# Floors against shipping a broken model, one per selection set: each is the shipped model's accuracy in
# assets/model/metrics.json minus a margin of about two points. The README reports the figures themselves.
DEV_FLOORS = {
    "sst2": 0.80,  # shipped 0.819
    "yelp": 0.94,  # shipped 0.962
    "pros_cons": 0.91,  # shipped 0.9285
    "tweets": 0.755,  # shipped 0.774
    "cad": 0.85,  # shipped 0.872 (originals and edits); the model before CAD scored 0.780
    "imdb": 0.855,  # shipped 0.874
    "ood": 0.905,  # shipped 0.926; the SST-2-only model scored 0.793
}
EVERYDAY_FLOOR = 0.845  # benchmarks/everyday_sentences.tsv: shipped 0.869; the seed-0 run before it 0.879
# Ceilings on the behavioural suite's test part (committed, so these run without the data folder): the
# shipped model's failure rates in metrics.json plus a margin; the README reports the figures themselves.
BEHAVIOUR_CEILINGS = {  # shipped: 1.3 %, 22.5 %, 0.7 %, 6.8 %, 0.4 %, 6.1 %; the seed-0 run before it 16.3 %, 15.5 %,
    # 17.0 %, 7.0 %, 8.2 %, 6.4 %
    "negation": 0.05,
    "negation at a distance": 0.26,
    "expectation denied": 0.04,
    "contrast": 0.10,
    "vocabulary": 0.04,
    "robustness": 0.09,
}
IDENTITY_CEILINGS = {"swap_changes_class": 0.17, "median_spread": 0.06}  # shipped 14.4 %, 0.029
# Words of product and restaurant reviews that the tokenizer should keep whole, now that it learns from them.
ONE_TOKEN_WORDS = ["phone", "battery", "staff", "delicious", "comfortable", "recommend", "refund", "waiter"]


@pytest.fixture(scope="module")
def bundled():
    return load_model(device="cpu")


@pytest.fixture(scope="module")
def data_dir() -> Path:
    """The data folder, or skip the test when it is not there."""
    if not (DATA_DIR / "sst2" / "glue_dev.tsv").is_file():
        pytest.skip(f"sentiment data not found at {DATA_DIR} (set SENTIMENT_DATA_DIR to the folder of its README)")
    return DATA_DIR


@pytest.fixture(scope="module")
def dev_sets(bundled, data_dir) -> dict:
    """The selection sets of the shipped run, read as training read them (without --ood-file: a committed file)."""
    arguments = bundled.metrics["arguments"]
    return read_dev_sets(data_dir, arguments["imdb_dev_rows"], None, arguments["max_rows"])


def tolerance(rows: int) -> float:
    """Two rows: other CPUs may round a borderline logit the other way."""
    return 2 / rows


def test_folder_is_complete_and_small():
    names = {path.name for path in DEFAULT_MODEL_DIR.iterdir()}
    assert {"config.json", "model.safetensors", "tokenizer.json", "metrics.json", "README.md"} <= names
    assert sum(path.stat().st_size for path in DEFAULT_MODEL_DIR.rglob("*") if path.is_file()) <= MAX_BYTES


def test_metrics_and_card_record_how_it_was_trained(bundled):
    metrics = bundled.metrics
    assert set(metrics["dev"]) == {*DEV_FLOORS, "mean"}
    assert set(metrics["test"]) == {"sst2", "imdb", "multi_domain", "everyday"}
    # The sources of the recipe that trained it, in the order the recipe reads them (an older recipe has fewer).
    sources = list(metrics["train_examples"])
    assert sources == [name for name in SOURCES if name in sources] and len(sources) >= 13
    assert all(metrics["train_examples"].values())
    assert metrics["command"].startswith("python -m transformer.train") and metrics["train_seconds"] > 0
    arguments = metrics["arguments"]
    assert len(metrics["pretrain_history"]) == arguments["pretrain_epochs"]
    teacher_seeds = [arguments["seed"] + k for k in range(1, arguments["teachers"] + 1)]
    assert [teacher["seed"] for teacher in metrics["teachers"]] == teacher_seeds
    assert metrics["best_epoch"] in [epoch["epoch"] for epoch in metrics["history"]]
    card = (DEFAULT_MODEL_DIR / "README.md").read_text()
    _, front_matter, body = card.split("---\n", 2)
    metadata = yaml.safe_load(front_matter)
    assert metadata["pipeline_tag"] == "text-classification" and metadata["license"] and metadata["datasets"]
    assert metrics["command"] in card and f"seed {metrics['seed']}" in card
    data_table = body.split("## Training data", 1)[1].split("\n## ", 1)[0]
    for source in sources:  # every data set: what it is, its licence, a citation with a year, its examples
        rows = [line for line in data_table.splitlines() if line.startswith(f"| {source} |")]
        cells = [cell.strip() for cell in rows[0].strip("|").split("|")] if len(rows) == 1 else []
        assert len(cells) == 5 and all(cells), f"{source}: no complete row in the card's data table"
        assert re.search(r"\b(19|20)\d\d\b", cells[3]), f"{source}: no year in the citation {cells[3]!r}"
    assert bundled.model.label_names == ["negative", "positive"] and bundled.model.pad_token_id == 0
    assert card == render_model_card(bundled.model, metrics)  # every figure in it is metrics.json's (the probe too)


def test_recorded_selection_scores_clear_their_floors(bundled):
    below = {name: bundled.metrics["dev"][name] for name, floor in DEV_FLOORS.items()
             if bundled.metrics["dev"][name] < floor}  # fmt: skip
    assert not below, f"under the floors {DEV_FLOORS}: {below}"


@pytest.mark.parametrize(
    "name",
    ["sst2", "yelp", "pros_cons", "tweets", *(pytest.param(name, marks=pytest.mark.slow) for name in ("cad", "imdb"))],
)  # IMDB and CAD: 1,000 and 486 full reviews read in chunks, ten and five seconds on one CPU thread
def test_reaches_its_recorded_accuracy_on_each_selection_set(bundled, dev_sets, name):
    rows = dev_sets[name]
    assert len(rows.texts) == bundled.metrics["dev_rows"][name]
    measured = accuracy(predicted_classes(bundled.model, bundled.tokenizer, rows.texts), rows.labels)
    assert measured == pytest.approx(bundled.metrics["dev"][name], abs=tolerance(len(rows.texts)))
    assert measured >= DEV_FLOORS[name]


def test_reaches_its_recorded_accuracy_on_the_sst2_test_set(bundled, data_dir):
    rows = read_test_sets(data_dir, bundled.metrics["arguments"]["max_rows"])["sst2"]
    measured = accuracy(predicted_classes(bundled.model, bundled.tokenizer, rows.texts), rows.labels)
    assert measured == pytest.approx(bundled.metrics["test"]["sst2"], abs=tolerance(len(rows.texts)))


def test_hand_written_reviews_from_other_domains(bundled):
    # 121 raw-text reviews of products, restaurants, hotels and films (README: "Outside film reviews"),
    # one of the selection sets. A floor that catches a normaliser or tokenizer that breaks raw text.
    data = read_labelled(REPO_ROOT / "benchmarks" / "ood_reviews.tsv")
    assert len(data.texts) == 121 and sorted(set(data.labels)) == [0, 1]
    measured = accuracy(predicted_classes(bundled.model, bundled.tokenizer, data.texts), data.labels)
    assert measured == pytest.approx(bundled.metrics["dev"]["ood"], abs=tolerance(121))
    assert measured >= DEV_FLOORS["ood"]


def test_everyday_sentences_stay_above_their_floor(bundled):
    data = read_labelled(REPO_ROOT / "benchmarks" / "everyday_sentences.tsv")
    assert len(data.texts) >= 50 and sorted(set(data.labels)) == [0, 1]
    measured = accuracy(predicted_classes(bundled.model, bundled.tokenizer, data.texts), data.labels)
    assert measured == pytest.approx(bundled.metrics["test"]["everyday"], abs=tolerance(len(data.texts)))
    assert measured >= EVERYDAY_FLOOR


@pytest.mark.parametrize("word", ONE_TOKEN_WORDS)
def test_review_vocabulary_is_one_token_each(bundled, word):
    encoding = bundled.tokenizer.encode(word, add_special_tokens=False)
    assert len(encoding.ids) == 1 and encoding.ids[0] != UNK_ID, f"{word!r} -> {encoding.tokens}"


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("A wonderful, moving film with superb acting.", "positive"),
        ("Boring, predictable and far too long.", "negative"),
        ("I didn't like it at all.", "negative"),
        ("I didnt like it at all", "negative"),
        ("It's one of the best movies I've seen this year!", "positive"),
    ],
)
def test_plain_raw_text_gets_the_obvious_label(bundled, text, label):
    prediction = predicted_classes(bundled.model, bundled.tokenizer, [text]).item()
    assert bundled.model.label_names[prediction] == label


@pytest.fixture(scope="module")
def behaviour(bundled) -> dict:
    """The suite's test part on the bundled model, summarised as metrics.json keeps it."""
    return summarise(run_suite(build_suite(("test",)), positive_probabilities(bundled.model, bundled.tokenizer)))


def test_behaviour_matches_its_recorded_figures(bundled, behaviour):
    recorded = bundled.metrics["behaviour"]["test"]
    for name, rate in recorded["tests"].items():  # one case of 200 either way: another CPU's rounding
        assert behaviour["test"]["tests"][name] == pytest.approx(rate, abs=0.011), name
    assert behaviour["test"]["identity"]["median_spread"] == pytest.approx(
        recorded["identity"]["median_spread"], abs=0.01
    )


def test_behaviour_stays_under_its_ceilings(behaviour):
    capabilities = behaviour["test"]["capabilities"]
    over = {name: capabilities[name] for name, ceiling in BEHAVIOUR_CEILINGS.items() if capabilities[name] > ceiling}
    assert not over, f"over the ceilings {BEHAVIOUR_CEILINGS}: {over}"
    identity = behaviour["test"]["identity"]
    assert all(identity[name] <= ceiling for name, ceiling in IDENTITY_CEILINGS.items()), identity


# The page's examples with what they mean; negation and contrast among them.
EXAMPLE_LABELS = {
    "The plot is thin, but the cast is great.": "positive",
    "The food was not bad at all, and the staff were friendly.": "positive",
    "The service was slow, but the food was worth the wait.": "positive",
    "I did not like this movie at all, and the ending was not good either.": "negative",
    "I was skeptical at first, but this blender is fantastic.": "positive",
    "The hotel was not as clean as the photos suggested.": "negative",
    "A dull, lifeless remake that wastes a wonderful cast.": "negative",
}


# The page's neutral statements about a person: no opinion, so the model should say "not sure".
NEUTRAL_EXAMPLES = ("My neighbour is a Muslim woman.",)
NEAR_MIDDLE = 0.15  # how far from P(positive) = 0.5 a neutral example may read


def test_the_page_examples_are_read_right(bundled, app):
    examples = app.EXAMPLES  # the fixture's app, on a tiny model: importing ``app`` here would serve assets/model
    assert set(examples) == set(EXAMPLE_LABELS) | set(NEUTRAL_EXAMPLES)
    labelled = [text for text in examples if text in EXAMPLE_LABELS]
    predictions = predicted_classes(bundled.model, bundled.tokenizer, labelled).tolist()
    assert [bundled.model.label_names[p] for p in predictions] == [EXAMPLE_LABELS[text] for text in labelled]
    neutral = positive_probabilities(bundled.model, bundled.tokenizer)(list(NEUTRAL_EXAMPLES))
    assert all(abs(p - 0.5) <= NEAR_MIDDLE for p in neutral), dict(zip(NEUTRAL_EXAMPLES, neutral, strict=True))


def test_metrics_json_matches_what_load_model_returns(bundled):
    assert json.loads((DEFAULT_MODEL_DIR / "metrics.json").read_text()) == bundled.metrics
