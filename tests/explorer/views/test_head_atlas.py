"""The head atlas and the error list: the numbers on hand-built attention, the corpus knockout against
``/knockout``'s maths, padding, the hash that ties the files to their model, the command, and the atlas
computed on demand (only when missing, once for concurrent requests, into the cache folder, never the model's)."""

import json
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import gradio as gr
import pytest
import torch
from conftest import without_artifact
from tiny import tiny_model

from transformer.artifacts import main as write_artifacts
from transformer.explain import atlas, batching
from transformer.explain.knockout import head_importance
from transformer.explorer import analysis
from transformer.explorer.corpus import data_folder as corpus
from transformer.explorer.corpus import model_files as artifacts
from transformer.explorer.views import errors as errors_view
from transformer.explorer.views import head_atlas as atlas_view
from transformer.loading import load_model


class HandBuiltAttention(torch.nn.Module):
    """Two layers of two heads: head 1 always looks at the previous token (the first token at itself),
    head 2 looks evenly at every real token. Logits come from the real tiny model."""

    def __init__(self):
        super().__init__()
        self.inner = tiny_model()
        self.num_layers, self.num_heads, self.max_len = 2, 2, self.inner.max_len
        self.label_names = self.inner.label_names

    def forward(self, ids, mask, output_attentions=False, head_mask=None):
        b, n = ids.shape
        previous = torch.diag_embed(torch.ones(n - 1), offset=-1)  # (N, N): query i+1 -> key i
        previous[0, 0] = 1.0
        uniform = mask[:, None, :].float() / mask.sum(dim=1).view(b, 1, 1)  # (B, 1, N) over real keys
        heads = torch.stack([previous.expand(b, n, n), uniform.expand(b, n, n)], dim=1)  # (B, H, N, N)
        logits = self.inner(ids, mask)
        return (logits, (heads, heads)) if output_attentions else logits


def sentences(count: int, seed: int = 0) -> list[list[int]]:
    generator = torch.Generator().manual_seed(seed)
    return [torch.randint(3, 50, (int(n),), generator=generator).tolist() for n in torch.randint(1, 20, (count,))]


def test_a_previous_token_head_scores_one_there_and_is_named_for_it():
    model = HandBuiltAttention().eval()
    corpus_ids = sentences(30)
    punctuation = torch.zeros(50, dtype=torch.bool)
    punctuation[7] = True
    found = atlas.head_behaviour(model, corpus_ids, punctuation, batch_size=8)
    previous = atlas.BEHAVIOURS.index("previous")
    assert found.behaviour[0, 0, previous] == pytest.approx(1.0)
    assert found.behaviour[0, 0, atlas.BEHAVIOURS.index("next")] == pytest.approx(0.0)
    assert atlas.head_role(found.behaviour[0, 0], float(found.entropy_share[0, 0])) == "previous token"
    assert found.entropy_mean[0, 0] == pytest.approx(0.0, abs=1e-6)
    assert found.entropy_share[0, 1] == pytest.approx(1.0)  # uniform over the real tokens, never the padding
    assert atlas.head_role(found.behaviour[0, 1], float(found.entropy_share[0, 1])) == "broad"
    lengths = torch.tensor([len(ids) for ids in corpus_ids], dtype=torch.float64)
    expected = float(((lengths - 1) / lengths).sum() / (lengths - 1).sum())  # 1/n on the previous token, n >= 2
    assert found.behaviour[0, 1, previous] == pytest.approx(expected, rel=1e-5)


def test_first_last_and_punctuation_weights_on_a_hand_built_corpus():
    # Token 7 is the punctuation. Two of the five sentences have none, so they must not count towards its mean.
    corpus_ids = [[7, 5, 6], [5, 7, 7, 9, 10], [8], [5, 6, 8, 9], [7, 9]]  # 15 queries, 10 in punctuated ones
    punctuation = torch.zeros(50, dtype=torch.bool)
    punctuation[7] = True
    found = atlas.head_behaviour(HandBuiltAttention().eval(), corpus_ids, punctuation, batch_size=2)
    # Previous-token head: the first token gets queries 0 and 1 of each sentence (only query 0 of [8]), the last
    # token only the one query of [8]; punctuation gets queries 0, 1 | 2, 3 | 0, 1 of the punctuated sentences.
    previous_head = [5 / 15, 1.0, 0.0, 9 / 15, 1 / 15, 6 / 10]
    # Uniform head: 1/n on each key, so one unit per sentence on the first and on the last token, and as
    # many units as it has punctuation tokens: 1 + 2 + 1 over 10 queries.
    neighbour = (2 / 3 + 4 / 5 + 0 + 3 / 4 + 1 / 2) / 10  # Σ (n − 1)/n over the 10 queries with a neighbour
    uniform_head = [5 / 15, neighbour, neighbour, 5 / 15, 5 / 15, 4 / 10]
    expected = torch.tensor([previous_head, uniform_head]).expand(2, 2, len(atlas.BEHAVIOURS))
    torch.testing.assert_close(found.behaviour, expected, rtol=1e-6, atol=1e-7)


def test_the_role_rule():
    weights = torch.tensor([0.1, 0.2, 0.1, 0.1, 0.1, 0.6])
    assert atlas.head_role(weights, 0.9) == "punctuation"
    assert atlas.head_role(torch.full((6,), 0.2), 0.85) == "broad"
    assert atlas.head_role(torch.full((6,), 0.2), 0.5) == "mixed"


def test_padding_changes_nothing():
    model, corpus_ids = tiny_model(), sentences(12, seed=1)
    alone = atlas.head_behaviour(model, corpus_ids, torch.zeros(50, dtype=torch.bool), batch_size=1)
    padded = atlas.head_behaviour(model, corpus_ids, torch.zeros(50, dtype=torch.bool), batch_size=12)
    torch.testing.assert_close(padded.behaviour, alone.behaviour, atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(padded.entropy_mean, alone.entropy_mean, atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(padded.token_scores, alone.token_scores, atol=1e-5, rtol=1e-4)
    assert int(padded.token_counts.sum()) == sum(map(len, corpus_ids))


def test_importance_on_one_sentence_is_the_single_head_knockout():
    model = tiny_model(seed=3)
    ids = [5, 9, 12, 30, 7, 8]
    for label in (0, 1):
        found = atlas.corpus_importance(model, [ids], [label])
        expected = head_importance(model, torch.tensor([ids]), target=label)
        torch.testing.assert_close(found.prob_drop, expected.drop, atol=1e-5, rtol=1e-4)
        predicted = int(model(torch.tensor([ids])).argmax())
        assert found.base_accuracy == float(predicted == label)


def test_corpus_importance_in_passes_equals_one_batch(monkeypatch):
    # 7 sentences × (1 + 2·2) copies = 35 rows a batch, cut into passes of 4 rows that straddle the copies.
    model, corpus_ids = tiny_model(seed=3), sentences(7)
    labels = [i % 2 for i in range(7)]
    whole = atlas.corpus_importance(model, corpus_ids, labels, batch_size=7)
    longest = max(map(len, corpus_ids))
    monkeypatch.setattr(batching, "MEMORY_BUDGET_BYTES", 4 * batching.row_bytes(model, longest, backward=False))
    seen = []
    model.register_forward_pre_hook(lambda _, args: seen.append(args[0].size(0)))
    in_passes = atlas.corpus_importance(model, corpus_ids, labels, batch_size=7)
    assert max(seen) <= 4 and sum(seen) == 35
    torch.testing.assert_close(in_passes.prob_drop, whole.prob_drop, atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(in_passes.accuracy_drop, whole.accuracy_drop)
    assert in_passes.base_accuracy == whole.base_accuracy


def test_top_tokens_skip_rare_ones():
    scores, counts = torch.tensor([9.0, 3.0, 2.0, 1.0]), torch.tensor([1, 10, 12, 40])
    assert [i for i, _ in atlas.top_tokens(scores, counts, k=2, min_count=10)] == [1, 2]


def test_the_reference_corpus_is_sst2_then_a_fixed_sample(tiny_data_dir):
    sets = corpus.dev_sets(tiny_data_dir)
    picked = corpus.reference_corpus(sets, size=10)
    assert picked[:4] == sets["sst2"] and len(picked) == 10
    assert picked == corpus.reference_corpus(sets, size=10)
    assert {row.set for row in picked[4:]} == {"yelp", "pros_cons", "tweets"}


def test_the_error_list_is_exactly_the_misclassified_rows(tiny_model_dir, tiny_data_dir):
    loaded = load_model(tiny_model_dir, device="cpu")
    sets = corpus.dev_sets(tiny_data_dir)
    found = artifacts.build_errors(loaded.model, loaded.tokenizer, sets, "hash")
    expected = []
    for row in (row for rows in sets.values() for row in rows):
        result = analysis.analyze(loaded.model, loaded.tokenizer, row.text)
        predicted = max(range(2), key=lambda c: result.probabilities[c])
        if predicted != row.label:
            expected.append((row.set, row.text, max(result.probabilities)))
    assert sorted((e["set"], e["text"]) for e in found["errors"]) == sorted((s, t) for s, t, _ in expected)
    confidences = [e["confidence"] for e in found["errors"]]
    assert confidences == sorted(confidences, reverse=True)
    assert sum(count["wrong"] for count in found["sets"].values()) == len(expected) > 0
    small = artifacts.build_errors(loaded.model, loaded.tokenizer, sets, "hash", max_bytes=400)
    assert len(json.dumps(small, ensure_ascii=False).encode()) <= 400 and small["left_out"] > 0
    assert small["errors"] == found["errors"][: len(small["errors"])]


def test_the_command_writes_both_files_and_a_new_model_hash_invalidates_them(tiny_model_dir, tiny_data_dir, capsys):
    write_artifacts(["--model", str(tiny_model_dir), "--data-dir", str(tiny_data_dir), "--sentences", "10"])
    sha = artifacts.model_hash(tiny_model_dir)
    atlas_data = artifacts.read_artifact(tiny_model_dir, artifacts.ATLAS_FILE, sha)
    assert atlas_data["sentences"] == 10 and len(atlas_data["heads"]) == 4  # 2 layers x 2 heads
    assert [(h["layer"], h["head"]) for h in atlas_data["heads"]] == [(1, 1), (1, 2), (2, 1), (2, 2)]
    assert artifacts.read_artifact(tiny_model_dir, artifacts.ERRORS_FILE, sha)["model_sha256"] == sha
    assert "head_atlas.json: 10 sentences" in capsys.readouterr().out

    tiny_model(
        seed=1, vocab_size=load_model(tiny_model_dir).model.embedding.num_embeddings, max_len=64
    ).save_pretrained(tiny_model_dir)
    new_sha = artifacts.model_hash(tiny_model_dir)
    assert new_sha != sha
    assert artifacts.read_artifact(tiny_model_dir, artifacts.ATLAS_FILE, new_sha) is None
    assert artifacts.read_artifact(tiny_model_dir, artifacts.ERRORS_FILE, new_sha) is None


def test_the_command_says_when_the_data_is_missing(tiny_model_dir, tmp_path):
    with pytest.raises(SystemExit, match="the data folder lacks"):
        write_artifacts(["--model", str(tiny_model_dir), "--data-dir", str(tmp_path)])


def test_the_atlas_table_and_figure(tiny_model_dir, tiny_data_dir):
    loaded = load_model(tiny_model_dir, device="cpu")
    rows = corpus.reference_corpus(corpus.dev_sets(tiny_data_dir), size=10)
    data = artifacts.build_atlas(loaded.model, loaded.tokenizer, rows, "hash")
    table = atlas_view.atlas_rows(data)
    assert [row[0] for row in table] == ["L1 H1", "L1 H2", "L2 H1", "L2 H2"]
    assert all(len(row) == len(atlas_view.COLUMNS) for row in table)
    figure = atlas_view.atlas_figure(data)
    assert len(figure.data) == 4 and all(max(trace.y) <= 1 + 1e-6 for trace in figure.data)
    assert "Role rule" in atlas_view.atlas_summary(data) and "<b>really" not in atlas_view.atlas_summary(data)


def test_the_error_filters():
    found = [
        {"set": "sst2", "label": "negative", "text": "A dull film", "predicted": "positive", "confidence": 0.9},
        {"set": "yelp", "label": "positive", "text": "Great <b>food</b>", "predicted": "negative", "confidence": 0.8},
    ]
    assert errors_view.filter_errors(found, "yelp") == found[1:]
    assert errors_view.filter_errors(found, label="negative") == found[:1]
    assert errors_view.filter_errors(found, search="DULL") == found[:1]
    assert errors_view.filter_errors(found, "sst2", "positive") == []
    data = {"sets": {"sst2": {}, "yelp": {}}, "label_names": ["negative", "positive"]}
    with pytest.raises(analysis.InputError, match="Choose a set from all, sst2, yelp"):
        errors_view.check_filters(data, "<b>imdb</b>", "all", "")
    assert "&lt;b&gt;" in errors_view.errors_summary({"sets": {"<b>x": {"rows": 1, "wrong": 1}}, "left_out": 0})


@pytest.fixture
def fresh_atlas(app, tmp_path, monkeypatch):
    """The app's model folder with no atlas kept, stored or read yet, and a cache folder of this test's own."""
    with without_artifact(atlas_view.ATLAS, app.get_model()[0].folder, tmp_path / "cache", monkeypatch) as folder:
        yield folder


def a_new_process():
    """What a restart forgets: the atlases computed and read in this process."""
    atlas_view.ATLAS.forget()


def snapshot(folder):
    """Every path under ``folder`` (and the folder itself) with its mtime and size."""
    return {path: (path.stat().st_mtime_ns, path.stat().st_size) for path in [folder, *folder.rglob("*")]}


def counting_builds(monkeypatch) -> list:
    """Count the atlas computations (each still runs): the list grows by one per ``build_atlas`` call."""
    calls, build = [], artifacts.build_atlas
    monkeypatch.setattr(artifacts, "build_atlas", lambda *args, **kwargs: calls.append(1) or build(*args, **kwargs))
    return calls


def test_first_use_computes_the_atlas_into_the_cache_never_the_model_folder(fresh_atlas, tiny_data_dir, monkeypatch):
    folder = fresh_atlas
    assert atlas_view.head_atlas()["note"].startswith("No head atlas for this model yet")  # no data folder here
    assert "make it with" in atlas_view.atlas_summary(None) and atlas_view.show_atlas()[1] == gr.update(
        value=None, visible=False
    )

    monkeypatch.setenv(corpus.DATA_DIR_VARIABLE, str(tiny_data_dir))
    before = snapshot(folder)
    computed = atlas_view.head_atlas()
    sha = artifacts.model_hash(folder)
    assert computed["sentences"] == 19 and computed["model_sha256"] == sha
    a_new_process()
    atlas_view.compute_and_show()  # the view's button, on a restart: reads the cache, computes nothing
    assert snapshot(folder) == before  # the endpoint and the view wrote nothing in the model folder

    cached = artifacts.cache_folder(sha) / artifacts.ATLAS_FILE
    assert cached.parent == Path(os.environ[artifacts.CACHE_VARIABLE]) / sha
    assert json.loads(cached.read_text(encoding="utf-8")) == computed
    a_new_process()
    assert atlas_view.ATLAS.current() == computed  # read back from the cache
    summary, figure, rows, _ = atlas_view.show_atlas()
    assert figure["visible"] and "reference corpus of 19 sentences" in summary
    assert len(figure["value"].data) == len(rows) == 4


def test_the_atlas_is_computed_only_when_none_is_kept_or_stored(fresh_atlas, tiny_data_dir, monkeypatch):
    monkeypatch.setenv(corpus.DATA_DIR_VARIABLE, str(tiny_data_dir))
    builds = counting_builds(monkeypatch)
    first = atlas_view.ATLAS.compute()
    assert atlas_view.head_atlas() is first and atlas_view.ATLAS.compute() is first
    atlas_view.compute_and_show()  # the hidden compute event, which anyone can post
    assert len(builds) == 1

    a_new_process()
    assert atlas_view.ATLAS.compute() == first and len(builds) == 1  # the cached one, after a restart
    bundled = {**first, "sentences": 7}  # what the developer's command writes next to the model is read first
    artifacts.write_artifact(fresh_atlas, artifacts.ATLAS_FILE, bundled)
    a_new_process()
    assert atlas_view.ATLAS.compute() == bundled and len(builds) == 1


def test_concurrent_requests_wait_for_one_computation_and_share_it(fresh_atlas, tiny_data_dir, monkeypatch):
    monkeypatch.setenv(corpus.DATA_DIR_VARIABLE, str(tiny_data_dir))
    callers, builds, release = 4, [], threading.Event()
    found_none = threading.Condition()
    missing = []
    looked_up = atlas_view.ATLAS.current

    def looking():  # counts the lookups that found no atlas: every caller is then past its first look
        atlas = looked_up()
        with found_none:
            missing.extend([] if atlas else [1])
            found_none.notify_all()
        return atlas

    def build(model, tokenizer, rows, sha):
        builds.append(1)
        assert release.wait(30), "the test never let the computation finish"
        return {"model_sha256": sha, "heads": [], "sentences": len(rows)}

    monkeypatch.setattr(atlas_view.ATLAS, "current", looking)
    monkeypatch.setattr(artifacts, "build_atlas", build)
    with ThreadPoolExecutor(callers) as pool:
        answers = [pool.submit(atlas_view.ATLAS.compute) for _ in range(callers)]
        with found_none:  # every caller has looked and found none while the first computes
            assert found_none.wait_for(lambda: len(missing) >= callers, timeout=30)
        release.set()
        atlases = [answer.result(timeout=30) for answer in answers]
    assert len(builds) == 1 and all(atlas is atlases[0] for atlas in atlases)


def test_an_unwritable_cache_keeps_the_atlas_in_memory(fresh_atlas, tiny_data_dir, monkeypatch, tmp_path):
    (tmp_path / "a-file").write_text("not a folder")
    monkeypatch.setenv(artifacts.CACHE_VARIABLE, str(tmp_path / "a-file" / "cache"))  # cannot be made, even as root
    monkeypatch.setenv(corpus.DATA_DIR_VARIABLE, str(tiny_data_dir))
    builds, before = counting_builds(monkeypatch), snapshot(fresh_atlas)
    assert atlas_view.head_atlas()["sentences"] == 19 and atlas_view.ATLAS.compute()["sentences"] == 19
    assert len(builds) == 1 and snapshot(fresh_atlas) == before


def test_the_cache_folder_rule(monkeypatch, tmp_path):
    sha = "ab" * 32
    monkeypatch.delenv(artifacts.CACHE_VARIABLE, raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert artifacts.cache_folder(sha) == tmp_path / "home" / ".cache" / "attention-explorer" / sha
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert artifacts.cache_folder(sha) == tmp_path / "xdg" / "attention-explorer" / sha
    monkeypatch.setenv(artifacts.CACHE_VARIABLE, str(tmp_path / "mine"))
    assert artifacts.cache_folder(sha) == tmp_path / "mine" / sha
    assert artifacts.cache_folder(None) is artifacts.cache_folder("unknown") is artifacts.cache_folder("../x") is None
    assert artifacts.cache_artifact(artifacts.ATLAS_FILE, {"model_sha256": "unknown"}) is None
    assert not (tmp_path / "mine").exists()


def test_the_atlas_bars_share_a_range_fitted_to_the_largest_weight_and_the_summary_says_over_what():
    heads = [
        {"layer": 1, "head": h, "role": "mixed", **dict.fromkeys(atlas.BEHAVIOURS, 0.05), "self": top}
        for h, top in ((1, 0.2), (2, 0.1))
    ]
    figure = atlas_view.atlas_figure({"num_layers": 1, "num_heads": 2, "heads": heads})
    ranges = [tuple(figure.layout[name].range) for name in figure.layout if name.startswith("yaxis")]
    assert ranges == [(0, pytest.approx(0.22))] * 2  # one range, 0 to the largest weight × 1.1: a 0.2 bar fills most
    summary = atlas_view.atlas_summary(
        {"sentences": 37, "sets": {"sst2": 37}, "base_accuracy": 0.865, "role_rule": "a <rule>", "heads": heads}
    )
    assert "reference corpus of 37 sentences" in summary and "86.5%" in summary
    assert "<b>Role rule:</b> a &lt;rule&gt; " in summary and "{" not in summary  # the rule itself, escaped, no code
