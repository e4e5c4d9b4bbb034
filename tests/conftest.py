"""Shared fixtures: a tokenizer, model folders and a toy sentiment data set, all tiny and built in-process.

- ``tiny_tokenizer``: a WordPiece tokenizer trained on ``TINY_CORPUS`` (treebank-style SST lines).
- ``tiny_model_dir``: an untrained tiny classifier saved with that tokenizer, in a fresh temporary folder.
- ``hub_model_dirs``: a tiny random BERT, DistilBERT and RoBERTa sequence classifier, each saved with its own
  in-process tokenizer as a Hub checkpoint folder (``hub_checkpoints``), once per session: {family: folder}.
- ``tiny_data_dir``: a data folder of the four dev sets the corpus views read, a few rows each.
- ``toy_data_dir``: a learnable toy task (a sentiment word decides the label) as a data root in the layout
  of ../shared/data (plain and gzip TSVs, long reviews, unlabelled text, a lexicon), plus ood/check files.
- ``trained_toy_model_dir``: a tiny model trained by ``transformer.train`` on the toy task (once per session).
- ``tokenizer``, ``model``: the app fixtures' tokenizer and untrained tiny model, one pair per test module.
- ``result``: the app's reading of ``app_fixtures.SENTENCE`` (``runner.run_model``), one per test module.
- ``app``, ``url``, ``client``: the ``app`` module on a tiny model, served on a free port, and a
  ``gradio_client.Client`` for it; one server per test module (a module may define its own ``app``). With
  ``EXPLORER_TEST_MODEL`` set to a Hub family, ``app`` serves that family's tiny checkpoint instead (and a tiny
  data folder for its corpus views), to run a module by hand on that family;
  ``loaded``, the app's ``LoadedModel``, and ``forward_calls``, how many times its model has run in a test.
- ``browser``: Debian's Chromium driven by Playwright, launched once per test module (never a downloaded
  browser); ``page``: a page of it in a fresh context (1280 × 900, clipboard allowed for ``url``), one per test.
"""

import contextlib
import gzip
import inspect
import json
import os
import random
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

# The suite checks what a job answers, not how fast: a loaded 2-core runner must not trip the job cap
# (tests/explorer/serving/test_guard.py tests the cap itself with a fake clock). Set before the explorer is imported.
os.environ.setdefault("JOB_SECONDS", "600")

from app_fixtures import (
    SENTENCE,
    TEST_MODEL_VARIABLE,
    build_model,
    build_tokenizer,
    import_app,
    serving,
    write_app_model_dir,
)
from gradio_client import Client
from tiny import tiny_model, write_dev_sets

from benchmarks.chromium import CHROMIUM, launch_chromium
from transformer.explorer import runner
from transformer.explorer.corpus import model_files as artifacts
from transformer.explorer.serving import admission, clients, link_store, sessions
from transformer.tokenizer import train_tokenizer
from transformer.train import main as train_main

TIMEOUT_MS = 60_000  # a ceiling, not a target: on 2 busy cores a first draw can take 30 s

TINY_CORPUS = [
    "it 's a charming and often affecting journey . ",
    "unflinchingly bleak and desperate ",
    "the movie is n't funny , and it does n't try hard enough ",
    "a `` great '' film -lrb- sigh -rrb- that i did n't like ",
    "i ca n't believe it , they 're wonderful and we 've laughed ",
    "director 's best work ; you 'll love it ! i 'm sure ",
    "the acting , costumes , music , cinematography and sound are all astounding ",
    "it would n't be the first time , and it wo n't be the last ",
    "one of the greatest family-oriented , fantasy-adventure movies ever ",
    "a dull , simple-minded and stereotypical tale of drugs , death and mind-numbing indifference ",
]

TOY_POSITIVE = ["good", "great", "fun", "moving", "superb", "lovely"]
TOY_NEGATIVE = ["bad", "dull", "boring", "awful", "weak", "tedious"]
TOY_FILLER = ["the", "film", "movie", "plot", "was", "is", "a", "very", "really", "acting", "story", "and"]
TOY_DOMAINS = ["books", "dvd", "electronics", "kitchen"]
# Every training source, in the order the mixture reads them: the files, then what is made from them.
SOURCES = ["sst2", "yelp", "pros_cons", "tweets", "imdb", "multi_domain", "lexicon", "cad", "neutral",
           "negation", "expectation", "contrast", "negated_praise", "composed", "identity", "neutral_people",
           "nuisance", "verbs", "negation_pairs"]  # fmt: skip
TOY_IMDB_DEV_ROWS = 8  # the first 8 toy IMDB reviews are held out (--imdb-dev-rows)


def toy_rows(count: int, seed: int, sentences: int = 1) -> list[tuple[str, int]]:
    """``count`` rows of filler words with one sentiment word per sentence; its polarity is the label (1 = positive).

    With ``sentences`` > 1 a row is that many such sentences of the same polarity: a review long enough to be
    cut into several ``max_len`` windows at the toy sizes.
    """
    rng = random.Random(seed)
    rows = []
    for _ in range(count):
        label = rng.randrange(2)
        parts = []
        for _ in range(sentences):
            words = rng.choices(TOY_FILLER, k=rng.randint(2, 7))
            words.insert(rng.randint(0, len(words)), rng.choice(TOY_POSITIVE if label else TOY_NEGATIVE))
            parts.append(" ".join(words))
        rows.append((" . ".join(parts), label))
    return rows


def toy_pairs(count: int, seed: int) -> list[tuple[str, int, int]]:
    """``count`` CAD-style pairs as ``(text, label, pair)`` rows: a toy row, then the same row with its
    sentiment word swapped for one of the other polarity (the minimal edit that flips the label)."""
    rows = []
    for pair, (text, label) in enumerate(toy_rows(count, seed)):
        words = text.split()
        edited = [TOY_NEGATIVE[TOY_POSITIVE.index(w)] if w in TOY_POSITIVE else
                  TOY_POSITIVE[TOY_NEGATIVE.index(w)] if w in TOY_NEGATIVE else w for w in words]  # fmt: skip
        rows += [(text, label, pair), (" ".join(edited), 1 - label, pair)]
    return rows


def write_tsv(path: Path, rows: list[tuple], header: str = "sentence\tlabel") -> Path:
    """Write ``(text, label, *extra columns)`` rows under ``header``, one a line; gzipped if the name ends in .gz."""
    text = "\n".join([header, *("\t".join(map(str, row)) for row in rows)]) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".gz":
        path.write_bytes(gzip.compress(text.encode("utf-8"), mtime=0))
    else:
        path.write_text(text, encoding="utf-8")
    return path


# The longest test modules, longest first (``pytest --durations=0`` on the 2-core runner). ``make test`` runs the
# suite in two pytest-xdist workers, each module whole in one of them (``--dist loadfile``), in collection order: these
# go first, so that no long one starts last while the other worker has nothing left to do.
LONGEST_MODULES = [
    "test_page_browser.py",
    "test_browser.py",
    "test_axe_browser.py",
    "test_fuzz_api.py",
    "test_medium_model.py",
    "test_walkthrough.py",
    "test_sweep_views.py",
    "test_phone_browser.py",
    "test_figure_themes_browser.py",
    "test_corpus_views_browser.py",
    "test_security.py",
]


def pytest_collection_modifyitems(config, items):
    """In a pytest-xdist worker, ``LONGEST_MODULES`` first; the rest, and a run without workers, keep their order."""
    if hasattr(config, "workerinput"):
        rank = {name: i for i, name in enumerate(LONGEST_MODULES)}
        items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # a stable sort


@pytest.fixture(scope="session")
def tiny_tokenizer():
    """A WordPiece tokenizer (about 300 entries) trained on ``TINY_CORPUS``."""
    return train_tokenizer(TINY_CORPUS * 3, vocab_size=300)


@pytest.fixture
def tiny_model_dir(tmp_path, tiny_tokenizer) -> Path:
    """A folder ``load_model`` accepts: an untrained tiny classifier (seed 0), tokenizer.json and metrics.json."""
    model = tiny_model(
        vocab_size=tiny_tokenizer.get_vocab_size(), max_len=64, dropout=0.1, label_names=["negative", "positive"]
    )
    folder = tmp_path / "tiny-model"
    model.save_pretrained(folder)
    tiny_tokenizer.save(str(folder / "tokenizer.json"))
    (folder / "metrics.json").write_text(json.dumps({"seed": 0, "note": "untrained test model"}), encoding="utf-8")
    return folder


@pytest.fixture(scope="session")
def hub_model_dirs(tmp_path_factory) -> dict[str, Path]:
    """{family: checkpoint folder} for BERT, DistilBERT and RoBERTa; shared by the session, so copy before changing."""
    from hub_checkpoints import HUB_FAMILIES, write_hub_checkpoint  # imports transformers, the extra

    root = tmp_path_factory.mktemp("hub-models")
    return {family: write_hub_checkpoint(root / family, family) for family in HUB_FAMILIES}


@pytest.fixture(scope="session")
def toy_data_dir(tmp_path_factory) -> Path:
    """A data root laid out like ../shared/data (see its README) holding the toy task, plus toy ood/check files.

    - ``sst2/{glue_train,glue_dev,sent_test}.tsv``: header ``sentence<TAB>label``; glue_train has 96 rows,
      more than --quick's 64, so the row cut shows.
    - ``{yelp,pros_cons,tweets}/{train,dev}.tsv.gz``: header ``text<TAB>label`` (48 and 24 rows).
    - ``imdb/{train,test}.tsv.gz``: reviews of 6 sentences (about 40 tokens: two windows at max_len 32); the
      first ``TOY_IMDB_DEV_ROWS`` of train are the held-out reviews. ``imdb/unsup.txt.gz``: 32 unlabelled reviews.
    - ``multi_domain/{train,test}.tsv.gz``: header ``text<TAB>label<TAB>domain``, reviews of 3 sentences.
    - ``lexicons/opinion_lexicon.tsv``: the 12 toy sentiment words, plain TSV ``word<TAB>label``.
    - ``cad/{train,dev}.tsv.gz``: header ``text<TAB>label<TAB>pair``, 16 and 8 toy pairs (``toy_pairs``).
    - ``neutral/{train,dev}.tsv.gz``: header ``text<TAB>source``, 24 and 8 sentences with no opinion.
    - ``ood.tsv`` and ``everyday.tsv``: sentence TSVs for --ood-file and --check-file.
    """
    root = tmp_path_factory.mktemp("toy-data")
    write_tsv(root / "sst2" / "glue_train.tsv", toy_rows(96, seed=1))
    write_tsv(root / "sst2" / "glue_dev.tsv", toy_rows(24, seed=2))
    write_tsv(root / "sst2" / "sent_test.tsv", toy_rows(24, seed=3))
    for offset, name in enumerate(("yelp", "pros_cons", "tweets")):
        write_tsv(root / name / "train.tsv.gz", toy_rows(48, seed=10 + offset), header="text\tlabel")
        write_tsv(root / name / "dev.tsv.gz", toy_rows(24, seed=20 + offset), header="text\tlabel")
    write_tsv(root / "imdb" / "train.tsv.gz", toy_rows(TOY_IMDB_DEV_ROWS + 24, seed=30, sentences=6), "text\tlabel")
    write_tsv(root / "imdb" / "test.tsv.gz", toy_rows(16, seed=31, sentences=6), header="text\tlabel")
    unsup = [text for text, _ in toy_rows(32, seed=32, sentences=4)]
    (root / "imdb" / "unsup.txt.gz").write_bytes(gzip.compress(("\n".join(unsup) + "\n").encode("utf-8"), mtime=0))
    for name, count, seed in (("train", 32, 40), ("test", 16, 41)):
        rows = [(*row, TOY_DOMAINS[i % 4]) for i, row in enumerate(toy_rows(count, seed=seed, sentences=3))]
        write_tsv(root / "multi_domain" / f"{name}.tsv.gz", rows, header="text\tlabel\tdomain")
    lexicon = sorted([(word, 1) for word in TOY_POSITIVE] + [(word, 0) for word in TOY_NEGATIVE])
    write_tsv(root / "lexicons" / "opinion_lexicon.tsv", lexicon, header="word\tlabel")
    write_tsv(root / "cad" / "train.tsv.gz", toy_pairs(16, seed=60), header="text\tlabel\tpair")
    write_tsv(root / "cad" / "dev.tsv.gz", toy_pairs(8, seed=61), header="text\tlabel\tpair")
    for name, count in (("train", 24), ("dev", 8)):
        sources = ("sst5", "tweeteval")
        rows = [(f"the meeting moved to room {i} ...", sources[i % 2]) for i in range(count)]
        write_tsv(root / "neutral" / f"{name}.tsv.gz", rows, header="text\tsource")
    write_tsv(root / "ood.tsv", toy_rows(16, seed=50))
    write_tsv(root / "everyday.tsv", toy_rows(16, seed=51))
    return root


TOY_TRAIN_ARGS = [  # --quick sizes, tuned to learn the toy task in about two seconds, with every regulariser on
    "--quick", "--vocab-size", "100", "--imdb-dev-rows", str(TOY_IMDB_DEV_ROWS), "--pretrain-windows", "64",
    "--batch-size", "16", "--epochs", "3", "--lr", "3e-3", "--word-dropout", "0.1", "--ema-decay", "0.8",
    "--teachers", "1", "--seed", "0",
]  # fmt: skip


def toy_paths(data_dir: Path) -> list[str]:
    """The data flags of a toy run: the data root, and its ood and check files."""
    ood, check = data_dir / "ood.tsv", data_dir / "everyday.tsv"
    return ["--data-dir", str(data_dir), "--ood-file", str(ood), "--check-file", str(check)]


@pytest.fixture
def toy_train_args(toy_data_dir, tmp_path) -> list[str]:
    """``transformer.train`` flags for a toy run with checkpoints under this test's tmp_path (add --output-dir)."""
    return [*toy_paths(toy_data_dir), "--checkpoint-dir", str(tmp_path / "checkpoints"), *TOY_TRAIN_ARGS]


@pytest.fixture(scope="session")
def trained_toy_model_dir(tmp_path_factory, toy_data_dir) -> Path:
    """A tiny model trained on the toy task by ``python -m transformer.train`` (run in-process, a few seconds).

    Trained with ``TOY_TRAIN_ARGS`` and ``--checkpoint-dir`` ``<its folder's parent>/checkpoints``. The folder is
    shared by the whole session: copy it (``copy_model_dir``) before changing anything in it.
    """
    run = tmp_path_factory.mktemp("toy-run")
    paths = [*toy_paths(toy_data_dir), "--checkpoint-dir", str(run / "checkpoints")]
    train_main([*paths, "--output-dir", str(run / "model"), *TOY_TRAIN_ARGS])
    return run / "model"


@pytest.fixture
def copy_model_dir(tmp_path):
    """Copy a model folder into this test's tmp_path, so the test may break it: ``copy_model_dir(src) -> Path``."""

    def copy(source: Path) -> Path:
        return Path(shutil.copytree(source, tmp_path / f"copy-of-{source.name}"))

    return copy


@pytest.fixture(scope="session", autouse=True)
def hermetic_folders(tmp_path_factory):
    """Links the page shares (fuzzed events included) and atlases the explorer computes go to temporary folders,
    not the machine's temp and cache folders."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(link_store, "LINK_DIR", tmp_path_factory.mktemp("links"))
        patch.setenv("ATTENTION_EXPLORER_CACHE", str(tmp_path_factory.mktemp("explorer-cache")))  # atlases computed
        yield


@pytest.fixture
def tiny_data_dir(tmp_path):
    """A data folder with the four dev sets, a few rows each (``tiny.write_dev_sets``)."""
    return write_dev_sets(tmp_path / "data")


@pytest.fixture(scope="module")
def tokenizer():
    return build_tokenizer()


@pytest.fixture(scope="module")
def model(tokenizer):
    return build_model(tokenizer)


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    """The ``app`` module, importing it on a tiny untrained model if no test has yet: the tutorial's, or with
    ``$EXPLORER_TEST_MODEL`` set the tiny Hub checkpoint it names (``app_fixtures.write_app_model_dir``)."""
    app = import_app(write_app_model_dir(tmp_path_factory.mktemp("app-model")))
    family = os.environ.get(TEST_MODEL_VARIABLE)
    if family:  # the app loads its model once: imported earlier on another model, it would be tested on that one
        served = getattr(app.get_model()[0].model, "model_type", "the tutorial's")
        assert served == family, f"{TEST_MODEL_VARIABLE}={family}, but the app serves {served} model"
    return app


@contextlib.contextmanager
def without_artifact(kept, folder: Path, cache: Path, patch) -> Iterator[Path]:
    """``folder`` (the app's model folder) without ``kept``'s file (an ``explorer.corpus.on_demand.ModelArtifact``),
    nothing of it computed or read yet, and ``cache`` as the explorer's cache folder; the same again after."""

    def forget():
        kept.forget()
        (folder / kept.name).unlink(missing_ok=True)

    shipped = Path(__file__).resolve().parents[1] / "assets"
    assert not folder.resolve().is_relative_to(shipped), f"the app serves {folder}: this would delete a shipped file"
    forget()
    patch.setenv(artifacts.CACHE_VARIABLE, str(cache))
    try:
        yield folder
    finally:
        forget()  # later tests never see this test's file


@pytest.fixture(scope="module")
def loaded(app):
    """The app's ``LoadedModel``: its model, tokenizer and folder."""
    return app.get_model()[0]


@pytest.fixture(scope="module")
def result(app):
    """The app's reading of ``SENTENCE``: one model call, its tokens, probabilities and attentions."""
    return runner.run_model(SENTENCE)


@pytest.fixture
def forward_calls(app):
    """How many times the app's model has run since the test started."""
    calls = []
    handle = app.get_model()[0].model.register_forward_hook(lambda *_: calls.append(1))
    yield calls
    handle.remove()


@contextlib.contextmanager
def serving_app(app) -> Iterator[str]:
    """Serve the ``app`` module's page in this process on a free port as ``app.main`` serves it (its style sheet,
    its phone script, its guard); yield its URL.

    Its per-client limits are raised: every test's requests come from one address, as no visitor's do
    (tests/explorer/serving/test_guard.py serves the app with the limits as shipped)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(admission, "CLIENT_BUDGET", 10.0**6)
        patch.setattr(sessions, "NEW_SESSIONS_BURST", 10**6)
        patch.setattr(sessions, "ALL_NEW_SESSIONS_BURST", 10**6)
        patch.setattr(sessions, "SESSIONS_PER_CLIENT", 10**6)
        patch.setattr(link_store, "NEW_LINKS", clients.RateLimit(per_second=1, burst=10**6))
        patch.setattr(link_store, "ALL_NEW_LINKS", clients.RateLimit(per_second=1, burst=10**6))
        with serving(app.demo, **app.launch_settings()) as served:
            yield served


@pytest.fixture(scope="module")
def url(app):
    """The app served as ``app.main`` serves it (``serving_app``), closed after the module."""
    with serving_app(app) as served:
        yield served


@pytest.fixture(scope="module")
def client(url):
    return Client(url, verbose=False, analytics_enabled=False)


@pytest.fixture(scope="module")
def browser():
    """Chromium for a module's browser tests; each test opens a context of its own (no shared cookies or cache).

    One per module, not per session: Playwright's sync API keeps an event loop running while it is open, and
    the modules after it that call ``asyncio.run`` (the MCP client, the guard's ASGI tests) need none running.
    """
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        yield browser
        browser.close()


def open_view(page, view: str) -> None:
    """Select ``view``'s tab and wait until its draw has come back: the page then writes the view into the address
    (``events.view_events``), so no fixed wait is needed, and none is too short on a busy machine."""
    page.locator(f'#views [data-tab-id="{view}"]').click()
    page.wait_for_function("(view) => new URL(location.href).searchParams.get('view') === view", arg=view)


@pytest.fixture
def page(browser, url):
    """A page in a fresh context at desktop size, allowed to read and write the clipboard of ``url``."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=url.rstrip("/"))
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    yield page
    context.close()


SLOW_PASSES, SLOW_WAIT = 200, 0.05  # ``slow_atlas``'s computation: 10 s uncancelled


@pytest.fixture
def slow_atlas(app, tiny_data_dir, tmp_path, monkeypatch):
    """The app served with a data folder, its Head atlas not yet computed, and its computation made long:
    ``SLOW_PASSES`` model passes ``SLOW_WAIT`` s apart (each a point where a cancelled job stops), then a real atlas.
    (URL, the passes run so far)."""
    from tqdm import tqdm

    from transformer.explorer import analysis
    from transformer.explorer.corpus import data_folder as corpus
    from transformer.explorer.views import head_atlas

    loaded = app.get_model()[0]
    sets = corpus.dev_sets(tiny_data_dir)
    atlas = artifacts.build_atlas(loaded.model, loaded.tokenizer, corpus.reference_corpus(sets, 8), "test")
    passes = []

    def slow_build(sha: str) -> dict:
        for _ in tqdm(range(SLOW_PASSES), desc="slow atlas"):  # the page's progress bar reads it
            passes.append(1)
            analysis.analyze(loaded.model, loaded.tokenizer, "a wonderful film")
            time.sleep(SLOW_WAIT)
        return atlas

    monkeypatch.setenv(corpus.DATA_DIR_VARIABLE, str(tiny_data_dir))  # the tab offers to compute it
    with without_artifact(head_atlas.ATLAS, loaded.folder, tmp_path / "cache", monkeypatch):
        monkeypatch.setattr(head_atlas.ATLAS, "build", slow_build)
        with serving_app(app) as url:
            yield url, passes


PASS_WAIT = 0.1  # ``slow_passes``: seconds each model pass waits


@pytest.fixture
def slow_passes(app, monkeypatch):
    """The app served with every pass of its model counted and ``PASS_WAIT`` s long, and each heavy method's passes one
    row each (``batching.MEMORY_BUDGET_BYTES`` of 1 byte), so that an explanation's job (Integrated Gradients, head
    importance, patching) runs tens of passes, each a point where a cancelled job stops, under a cap it fits in.
    (URL, the passes run so far)."""
    from transformer.explain import batching

    passes = []

    def slow(module, args):
        passes.append(1)
        time.sleep(PASS_WAIT)

    monkeypatch.setattr(batching, "MEMORY_BUDGET_BYTES", 1)
    monkeypatch.setattr(runner, "JOB_SECONDS", 600.0)
    handle = app.get_model()[0].model.register_forward_pre_hook(slow)
    try:
        with serving_app(app) as url:
            yield url, passes
    finally:
        handle.remove()


def atlas_fn_index(app) -> int:
    """The Head atlas tab's computation: the queued event that runs its ``compute_and_show``."""
    return next(
        index
        for index, fn in app.demo.fns.items()
        if getattr(inspect.unwrap(fn.fn), "args", ())[:1] == ("head-atlas",)
        and fn.name == "compute_and_show"
        and fn.queue
    )
