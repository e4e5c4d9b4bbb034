"""The WordPiece tokenizer, with SST-style text normalisation built into it.

SST text is lowercased and tokenised the Penn Treebank way (``do n't``, ``it 's``, ``` ``great'' ```,
``-lrb-``); people type ``Don't``, ``"great"`` and ``(sigh)``. The normaliser below rewrites both
into the same form, and because it is a ``tokenizers`` normaliser it is saved inside
``tokenizer.json``: training and inference run exactly the same steps, and every token's character
offsets still point into the caller's raw text.

The tokenizer never truncates or pads; ``encode_batch`` does both for the model.
"""

import heapq
import itertools
from collections import Counter, defaultdict
from collections.abc import Iterable

import torch
from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers

PAD_TOKEN = "[PAD]"
UNK_TOKEN = "[UNK]"
MASK_TOKEN = "[MASK]"
SPECIAL_TOKENS = [PAD_TOKEN, UNK_TOKEN, MASK_TOKEN]  # ids 0, 1, 2 in this order
PAD_ID = 0
UNK_ID = 1
MASK_ID = 2
DEFAULT_VOCAB_SIZE = 16000

# Auxiliaries that take a clitic "n't"; "ca" and "wo" are the treebank's halves of "can't" and "won't".
_NT_HOSTS = "do|does|did|is|was|were|are|has|have|had|could|would|should|ca|wo|ai|need|must"
# The same hosts followed by " n", as top-level alternatives, the form a look-behind accepts: "\bdo n|\bdoes n|...".
_NT_HOSTS_SPLIT = "|".join(rf"\b{host} n" for host in _NT_HOSTS.split("|"))


def build_normalizer() -> normalizers.Normalizer:
    """The normalisation steps, in order: Unicode, case, quotes, treebank escapes, numbers, contractions."""
    insert_space = " "
    return normalizers.Sequence(
        [
            normalizers.NFKD(),
            normalizers.StripAccents(),
            normalizers.Lowercase(),
            normalizers.Replace(Regex("[\u2018\u2019\u201a\u201b\u2032\u00b4]"), "'"),
            normalizers.Replace(Regex("[\u201c\u201d\u201e\u201f\u2033]"), '"'),
            normalizers.Replace(Regex("``|''"), '"'),  # treebank quotes
            normalizers.Replace("`", "'"),
            normalizers.Replace("-lrb-", "("),
            normalizers.Replace("-rrb-", ")"),
            normalizers.Replace("-lsb-", "["),
            normalizers.Replace("-rsb-", "]"),
            normalizers.Replace(Regex(r"\\(?=[/*])"), ""),  # treebank "\/" and "\*"
            normalizers.Replace("_num_", "0"),  # Yelp's placeholder for a number: read it as one
            # Split clitics off their host word the treebank way: "don't" -> "do n't", "it's" -> "it 's".
            normalizers.Replace(Regex(r"(?<=[a-z])(?=n't\b)"), insert_space),
            normalizers.Replace(Regex(r"(?<=\w)(?='(?:s|re|ve|ll|d|m)\b)"), insert_space),
            # The same for the apostrophe-less spellings people type: "dont" -> "do n't", "cannot" -> "can not".
            # Only insertions, so the offsets of "n't" still cover the typed "nt".
            normalizers.Replace(Regex(rf"(?<=\b(?:{_NT_HOSTS}))(?=nt\b)"), insert_space),
            normalizers.Replace(Regex(rf"(?<={_NT_HOSTS_SPLIT})(?=t\b)"), "'"),
            normalizers.Replace(Regex(r"(?<=\bcan)(?=not\b)"), insert_space),
            normalizers.Replace(Regex(r"(?<=\b(?:gon|wan))(?=na\b)"), insert_space),
        ]
    )


def build_pre_tokenizer() -> pre_tokenizers.PreTokenizer:
    """Split on whitespace, then isolate punctuation, keeping clitics such as ``n't`` and ``'s`` whole."""
    clitic_or_punctuation = Regex(r"n't|'(?:s|re|ve|ll|d|m)\b|[^\w\s]")
    return pre_tokenizers.Sequence(
        [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Split(clitic_or_punctuation, behavior="isolated")]
    )


def train_tokenizer(texts: Iterable[str], vocab_size: int = DEFAULT_VOCAB_SIZE) -> Tokenizer:
    """Train a WordPiece tokenizer on raw or treebank-style texts; the same texts always give the same tokenizer.

    Args:
        texts: training sentences (normalised by the tokenizer itself, so pass them as they are).
        vocab_size: target vocabulary size, special tokens included (smaller if the texts run out of merges).

    Returns:
        A tokenizer with ``[PAD]`` = 0, ``[UNK]`` = 1, ``[MASK]`` = 2, no truncation and no padding.
    """
    normalizer, pre_tokenizer = build_normalizer(), build_pre_tokenizer()
    word_counts = Counter(
        word for text in texts for word, _ in pre_tokenizer.pre_tokenize_str(normalizer.normalize_str(text))
    )
    vocab = learn_wordpiece_vocab(word_counts, vocab_size)
    tokenizer = Tokenizer(models.WordPiece({token: i for i, token in enumerate(vocab)}, unk_token=UNK_TOKEN))
    tokenizer.normalizer = normalizer
    tokenizer.pre_tokenizer = pre_tokenizer
    tokenizer.decoder = decoders.WordPiece()
    tokenizer.add_special_tokens(SPECIAL_TOKENS)  # already in the vocabulary: keeps ids 0, 1, 2
    return tokenizer


def learn_wordpiece_vocab(word_counts: Counter, vocab_size: int, min_frequency: int = 2) -> list[str]:
    """Learn a WordPiece vocabulary by byte-pair-style merges, as ``tokenizers``' WordPieceTrainer does.

    Words start as characters, non-initial ones prefixed ``##`` (``"fun"`` -> ``f ##u ##n``); the most
    frequent adjacent pair is merged into a new token (``##u ##n`` -> ``##un``) until the vocabulary
    is full or no pair occurs ``min_frequency`` times. Unlike the Rust trainer, whose ties depend on
    hash order, ties go to the alphabetically first pair, so the result is reproducible.

    Returns:
        The tokens in id order: special tokens, the sorted alphabet, then merged tokens in merge order.
    """
    words = sorted(word_counts)
    counts = [word_counts[word] for word in words]
    symbols = [[word[0], *(f"##{char}" for char in word[1:])] for word in words]
    vocab = [*SPECIAL_TOKENS, *sorted({symbol for word in symbols for symbol in word})]
    known = set(vocab)
    pair_counts, pair_words = Counter(), defaultdict(set)
    for i, word in enumerate(symbols):
        for pair in itertools.pairwise(word):
            pair_counts[pair] += counts[i]
            pair_words[pair].add(i)
    heap = [(-count, pair) for pair, count in pair_counts.items()]
    heapq.heapify(heap)
    while len(vocab) < vocab_size and heap:
        negative_count, pair = heapq.heappop(heap)
        if pair_counts[pair] != -negative_count:
            continue  # a stale entry: the count has changed since it was pushed
        if -negative_count < min_frequency:
            break
        merged = pair[0] + pair[1].removeprefix("##")
        changed = set()
        for i in sorted(pair_words.pop(pair)):
            old, new = symbols[i], _merge(symbols[i], pair, merged)
            for old_pair in itertools.pairwise(old):
                pair_counts[old_pair] -= counts[i]
                changed.add(old_pair)
            for new_pair in itertools.pairwise(new):
                pair_counts[new_pair] += counts[i]
                pair_words[new_pair].add(i)
                changed.add(new_pair)
            symbols[i] = new
        for changed_pair in changed:
            if pair_counts[changed_pair] > 0:
                heapq.heappush(heap, (-pair_counts[changed_pair], changed_pair))
        if merged not in known:
            vocab.append(merged)
            known.add(merged)
    return vocab


def _merge(word: list[str], pair: tuple[str, str], merged: str) -> list[str]:
    """Replace every occurrence of ``pair`` in ``word`` (left to right) by ``merged``."""
    result, i = [], 0
    while i < len(word):
        if i + 1 < len(word) and (word[i], word[i + 1]) == pair:
            result.append(merged)
            i += 2
        else:
            result.append(word[i])
            i += 1
    return result


def pad_ids(sequences: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-pad non-empty token id lists with ``PAD_ID``: returns ``(input_ids, attention_mask)``, each (B, N)."""
    width = max(len(sequence) for sequence in sequences)
    input_ids = torch.full((len(sequences), width), PAD_ID, dtype=torch.long)  # (B, N)
    attention_mask = torch.zeros((len(sequences), width), dtype=torch.long)  # (B, N)
    for i, sequence in enumerate(sequences):
        input_ids[i, : len(sequence)] = torch.tensor(sequence, dtype=torch.long)
        attention_mask[i, : len(sequence)] = 1
    return input_ids, attention_mask


def encode_batch(tokenizer: Tokenizer, texts: list[str], max_len: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Tokenise texts into a right-padded batch for ``TransformerClassifier``.

    Callers must not pass text that encodes to no token at all (empty or whitespace-only).

    Args:
        tokenizer: a tokenizer from ``train_tokenizer`` (or loaded from its ``tokenizer.json``).
        texts: the texts to encode.
        max_len: longer encodings are cut to their first ``max_len`` tokens.

    Returns:
        ``(input_ids, attention_mask)``, both int64 of shape (B, N) with N = the longest encoding
        (at most ``max_len``); padding uses id 0 and mask 0, real tokens have mask 1.

    Raises:
        ValueError: if a text encodes to no tokens.
    """
    if not texts:
        raise ValueError("encode_batch needs at least one text")
    encodings = tokenizer.encode_batch(texts, add_special_tokens=False)
    ids = [encoding.ids[:max_len] for encoding in encodings]
    for text, row in zip(texts, ids, strict=True):
        if not row:
            raise ValueError(f"text {text!r} encodes to no tokens; pass non-empty text")
    return pad_ids(ids)
