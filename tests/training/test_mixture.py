"""The training mixture: reading the data root, chunking long reviews, the lexicon and the per-source weights."""

import gzip
import random
from pathlib import Path

import pytest
from conftest import SOURCES, TOY_IMDB_DEV_ROWS, TOY_NEGATIVE, TOY_POSITIVE, toy_rows, write_tsv

from transformer.tokenizer import train_tokenizer
from transformer.training.data import LabelledTexts, read_labelled, read_lines
from transformer.training.mixture import (
    PAIRED_SOURCES,
    Mixture,
    build_mixture,
    chunk,
    parse_weights,
    read_dev_sets,
    read_lexicon,
    read_test_sets,
    read_training_sets,
    read_unlabelled,
)


def rows_of(path: Path) -> list[tuple[str, int]]:
    """The (text, label) rows of a labelled file, read without the code under test."""
    raw = path.read_bytes()
    lines = (gzip.decompress(raw) if path.suffix == ".gz" else raw).decode("utf-8")
    return [(fields[0], int(fields[1])) for fields in (line.split("\t") for line in lines.splitlines()[1:])]


@pytest.fixture(scope="module")
def toy_tokenizer():
    texts = [text for text, _ in toy_rows(200, seed=7, sentences=2)]
    return train_tokenizer(texts, vocab_size=100)


def test_gzip_and_plain_files_with_either_header_read_the_same(tmp_path):
    rows = [('a "quoted" text', 1), ("it 's bad", 0), ("x\ty", 1)]  # a tab inside the text is kept
    plain = read_labelled(write_tsv(tmp_path / "plain.tsv", rows))
    packed = read_labelled(write_tsv(tmp_path / "packed.tsv.gz", rows, header="text\tlabel"))
    with gzip.open(tmp_path / "packed.tsv.gz", "rb") as file:
        assert file.read().startswith(b"text\tlabel\n")  # really gzip, really the other header
    assert plain.texts == packed.texts == [text for text, _ in rows]
    assert plain.labels == packed.labels == [1, 0, 1]


def test_extra_columns_such_as_the_domain_are_ignored(tmp_path):
    rows = [("great blender", 1, "kitchen"), ("a\ttab and a dull book", 0, "books")]
    data = read_labelled(write_tsv(tmp_path / "md.tsv.gz", rows, header="text\tlabel\tdomain"))
    assert data.texts == ["great blender", "a\ttab and a dull book"] and data.labels == [1, 0]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"label\ttext\n1\tgood\n", "header"),
        (b"text\tlabel\tdomain\ngood\t1\n", ":2: expected 3 tab-separated columns"),
        (b"text\tlabel\ngood\t1\nbad\tneg\n", ":3: label 'neg'"),
    ],
)
def test_a_bad_gzip_file_is_named_with_its_line(tmp_path, content, message):
    path = tmp_path / "bad.tsv.gz"
    path.write_bytes(gzip.compress(content))
    with pytest.raises(ValueError, match=message) as error:
        read_labelled(path)
    assert str(path) in str(error.value)


def test_a_file_that_is_not_gzip_is_a_value_error_naming_it(tmp_path):
    path = tmp_path / "fake.tsv.gz"
    path.write_bytes(b"text\tlabel\ngood\t1\n")
    with pytest.raises(ValueError, match="cannot be read") as error:
        read_labelled(path)
    assert str(path) in str(error.value)


def test_read_lines_gunzips_and_strips_line_ends(tmp_path):
    (tmp_path / "u.txt.gz").write_bytes(gzip.compress(b'first review\nsecond "one"\n'))
    (tmp_path / "u.txt").write_bytes(b'first review\nsecond "one"\n')
    assert read_lines(tmp_path / "u.txt.gz") == read_lines(tmp_path / "u.txt") == ["first review", 'second "one"']


def test_lexicon_gives_each_word_and_its_negation_with_the_other_label(tmp_path):
    path = write_tsv(tmp_path / "lexicon.tsv", [("abysmal", 0), ("adore", 1), ("envious", 0)], header="word\tlabel")
    lexicon = read_lexicon(path)
    assert list(zip(lexicon.texts, lexicon.labels, strict=True)) == [
        ("abysmal", 0), ("not abysmal", 1), ("adore", 1), ("not adore", 0), ("envious", 0), ("not envious", 1),
    ]  # fmt: skip
    cut = read_lexicon(path, max_rows=2)  # max_rows counts lexicon rows, not examples
    assert cut.texts == ["abysmal", "not abysmal", "adore", "not adore"]


def test_chunk_cuts_windows_and_drops_only_a_short_tail():
    ids = list(range(100))
    windows = chunk(ids, 32)  # 32 + 32 + 32 + 4: the 4-token tail is under a quarter of 32
    assert windows == [ids[0:32], ids[32:64], ids[64:96]]
    assert chunk(ids[:72], 32) == [ids[0:32], ids[32:64], ids[64:72]]  # an 8-token tail is a quarter: kept
    assert chunk(ids[:71], 32) == [ids[0:32], ids[32:64]]
    assert chunk(ids[:64], 32) == [ids[0:32], ids[32:64]]  # an exact multiple: no empty window
    assert chunk(ids[:3], 32) == [ids[:3]]  # a short text is its only window, however short
    assert chunk(ids[:32], 32) == [ids[:32]]
    for length in range(1, 50):  # with max_len 8 a tail under a quarter is a single token
        windows = chunk(ids[:length], 8)
        joined = [i for window in windows for i in window]
        assert all(1 <= len(window) <= 8 for window in windows) and joined == ids[: len(joined)]
        assert length - len(joined) == (1 if length > 8 and length % 8 == 1 else 0)


def test_training_sets_hold_out_the_first_imdb_reviews(toy_data_dir):
    train = read_training_sets(toy_data_dir, TOY_IMDB_DEV_ROWS)
    dev = read_dev_sets(toy_data_dir, TOY_IMDB_DEV_ROWS, toy_data_dir / "ood.tsv")
    imdb = rows_of(toy_data_dir / "imdb" / "train.tsv.gz")
    assert list(zip(dev["imdb"].texts, dev["imdb"].labels, strict=True)) == imdb[:TOY_IMDB_DEV_ROWS]
    assert list(zip(train["imdb"].texts, train["imdb"].labels, strict=True)) == imdb[TOY_IMDB_DEV_ROWS:]
    assert not set(dev["imdb"].texts) & set(train["imdb"].texts)
    # With a row cap the training reviews still start after the held-out ones.
    capped = read_training_sets(toy_data_dir, TOY_IMDB_DEV_ROWS, max_rows=5)
    assert capped["imdb"].texts == [text for text, _ in imdb[TOY_IMDB_DEV_ROWS : TOY_IMDB_DEV_ROWS + 5]]
    assert not set(capped["imdb"].texts) & set(read_dev_sets(toy_data_dir, TOY_IMDB_DEV_ROWS, None, 5)["imdb"].texts)


def test_every_source_is_read_from_its_file(toy_data_dir):
    train = read_training_sets(toy_data_dir, TOY_IMDB_DEV_ROWS)
    assert list(train) == SOURCES
    for name, path in [("sst2", "sst2/glue_train.tsv"), ("tweets", "tweets/train.tsv.gz"),
                       ("multi_domain", "multi_domain/train.tsv.gz")]:  # fmt: skip
        assert list(zip(train[name].texts, train[name].labels, strict=True)) == rows_of(toy_data_dir / path)
    assert sorted(train["lexicon"].texts[::2]) == sorted(TOY_POSITIVE + TOY_NEGATIVE)
    dev = read_dev_sets(toy_data_dir, TOY_IMDB_DEV_ROWS, toy_data_dir / "ood.tsv", max_rows=10)
    assert list(dev) == ["sst2", "yelp", "pros_cons", "tweets", "cad", "imdb", "ood"]
    sizes = [24, 24, 24, 24, 16, 8, 16]
    assert all(len(rows.texts) == min(10, n) for rows, n in zip(dev.values(), sizes, strict=True))
    assert "ood" not in read_dev_sets(toy_data_dir, TOY_IMDB_DEV_ROWS, None)
    test = read_test_sets(toy_data_dir)
    assert list(test) == ["sst2", "imdb", "multi_domain"]
    assert test["multi_domain"].texts == [text for text, _ in rows_of(toy_data_dir / "multi_domain" / "test.tsv.gz")]
    unlabelled = read_unlabelled(toy_data_dir)
    assert len(unlabelled) == 32 and unlabelled[:3] == read_unlabelled(toy_data_dir, max_rows=3)


def test_build_mixture_counts_chunks_per_source_and_keeps_their_labels(toy_tokenizer):
    long_review = " . ".join(["the plot was very good and the acting was really lovely"] * 6)
    sets = {
        "short": LabelledTexts(Path("s"), ["good film", "bad film", "dull"], [1, 0, 0]),
        "long": LabelledTexts(Path("l"), [long_review, "awful"], [1, 0]),
    }
    mixture = build_mixture(sets, toy_tokenizer, max_len=16)
    ids = toy_tokenizer.encode(long_review).ids
    expected_windows = chunk(ids, 16)
    assert len(ids) > 32 and len(expected_windows) >= 3
    assert mixture.counts() == {"short": 3, "long": len(expected_windows) + 1}
    assert all(1 <= len(sequence) <= 16 for sequence in mixture.sequences)
    long_rows = [i for i, source in enumerate(mixture.sources) if mixture.names[source] == "long"]
    assert [mixture.sequences[i] for i in long_rows[:-1]] == expected_windows
    assert [mixture.labels[i] for i in long_rows] == [1] * len(expected_windows) + [0]


def test_build_mixture_links_each_cad_pair_of_one_window_a_side(toy_tokenizer):
    long_review = " . ".join(["the plot was very good and the acting was really lovely"] * 6)
    sets = {
        "sst2": LabelledTexts(Path("s"), ["good film", "bad film"], [1, 0]),
        "cad": LabelledTexts(Path("c"), ["good film", "bad film", long_review, "awful", "dull", "lovely"],
                             [1, 0, 1, 0, 0, 1]),  # pairs: (0, 1), (2, 3), (4, 5); row 2 is several windows
    }  # fmt: skip
    mixture = build_mixture(sets, toy_tokenizer, max_len=16)
    windows = len(chunk(toy_tokenizer.encode(long_review).ids, 16))
    cad = 2  # the mixture's first cad index: after sst2's two
    first_pair, last_pair = (cad, cad + 1), (cad + windows + 3, cad + windows + 4)
    expected = [-1, -1, first_pair[1], first_pair[0], *[-1] * (windows + 1), last_pair[1], last_pair[0]]
    assert mixture.partners == expected  # the pair with a long side is left unlinked, the others both ways
    assert "sst2" not in PAIRED_SOURCES and "cad" in PAIRED_SOURCES


def test_a_source_drawn_at_weight_0_leaves_every_epoch_as_it_was_without_it(toy_data_dir, toy_tokenizer):
    sets = read_training_sets(toy_data_dir, TOY_IMDB_DEV_ROWS)
    assert list(sets)[-1] == "negation_pairs" and sets["negation_pairs"].texts  # made last: no index moves
    without = build_mixture({name: rows for name, rows in sets.items() if name != "negation_pairs"}, toy_tokenizer, 16)
    with_it = build_mixture(sets, toy_tokenizer, 16)
    weights = dict.fromkeys(without.names, 1.5)
    assert without.sample_epoch(weights, random.Random(7)) == with_it.sample_epoch(
        {**weights, "negation_pairs": 0}, random.Random(7)
    )
    linked = [i for i, partner in enumerate(with_it.partners) if partner >= 0]
    assert {with_it.names[with_it.sources[i]] for i in linked} == {"cad", "negation_pairs"}


def test_a_row_cap_reads_whole_cad_pairs(toy_data_dir):
    capped = read_training_sets(toy_data_dir, TOY_IMDB_DEV_ROWS, max_rows=5)
    assert len(capped["cad"].texts) == 4  # two whole pairs, not two and a half
    assert capped["cad"].labels[0] != capped["cad"].labels[1] and capped["cad"].labels[2] != capped["cad"].labels[3]


def toy_mixture() -> Mixture:
    """Three sources of 10, 4 and 6 examples (indices 0-9, 10-13, 14-19)."""
    sources = [0] * 10 + [1] * 4 + [2] * 6
    return Mixture(["a", "b", "c"], [[i + 3] for i in range(20)], [i % 2 for i in range(20)], sources)


def test_sample_epoch_draws_weight_times_size_from_each_source():
    mixture = toy_mixture()
    assert mixture.counts() == {"a": 10, "b": 4, "c": 6}
    epoch = mixture.sample_epoch({"a": 0.5, "b": 2, "c": 0}, random.Random(0))
    drawn_a = [i for i in epoch if i < 10]
    assert len(drawn_a) == 5 and len(set(drawn_a)) == 5  # half, without repeats
    assert sorted(i for i in epoch if 10 <= i < 14) == [10, 10, 11, 11, 12, 12, 13, 13]  # twice each
    assert not [i for i in epoch if i >= 14]  # weight 0 leaves the source out
    everything = mixture.sample_epoch({}, random.Random(0))  # a source not named keeps weight 1
    assert sorted(everything) == list(range(20))
    one_and_a_half = mixture.sample_epoch({"a": 1.5, "b": 0, "c": 0}, random.Random(0))
    assert len(one_and_a_half) == 15 and set(one_and_a_half) == set(range(10))


def test_sample_epoch_is_deterministic_for_a_seed():
    mixture = toy_mixture()
    weights = {"a": 0.5, "b": 0.5, "c": 1}
    draws = [mixture.sample_epoch(weights, random.Random(seed)) for seed in (1, 1, 2, 3)]
    assert draws[0] == draws[1]
    assert draws[0] != draws[2] or draws[0] != draws[3]


def test_sample_epoch_refuses_an_unknown_source():
    with pytest.raises(ValueError, match="no source named sst3") as error:
        toy_mixture().sample_epoch({"a": 1, "sst3": 2}, random.Random(0))
    assert "a, b, c" in str(error.value)


def test_parse_weights():
    assert parse_weights(["sst2=2", "tweets=0.5", "lexicon=0"]) == {"sst2": 2.0, "tweets": 0.5, "lexicon": 0.0}
    assert parse_weights([]) == {}
    for bad in ("sst2", "sst2=", "sst2=x", "sst2=-0.5"):
        with pytest.raises(ValueError, match="name=number"):
            parse_weights([bad])
