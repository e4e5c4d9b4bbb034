"""Tiny random ``transformers`` sequence classifiers (BERT, DistilBERT, RoBERTa) and their tokenizers, built in-process.

Each tokenizer is made here with ``tokenizers`` from ``HUB_CORPUS`` (WordPiece with BERT's [CLS]/[SEP]
template for BERT and DistilBERT, byte-level BPE trained with RoBERTa's <s>/</s> for RoBERTa). Each model is built
from its config (hidden size 16, 2 layers, 2 heads), seeded, with weights drawn wide enough
(``INIT_RANGE``) that knocking out a head or reordering tokens moves the logits, and saved with safetensors
beside its tokenizer.json: a folder ``load_model`` reads, with no network.
"""

import os
import shutil
import string
from pathlib import Path

import torch
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

HUB_FAMILIES = ("bert", "distilbert", "roberta")
HUB_CORPUS = [
    "it 's a charming and often affecting journey .",
    "the movie is n't funny , and it does n't try hard enough",
    "a wonderful film with great acting and a moving story",
    "a dull , simple-minded and stereotypical tale",
    "i ca n't believe it , they 're wonderful and we laughed",
    "the plot was boring and the acting was weak",
] * 3
MAX_LEN = 64  # positions the tiny models read
COMMIT = "0123456789abcdef0123456789abcdef01234567"  # the revision ``lay_out_hub_cache`` files a checkpoint under
INIT_RANGE = 0.3  # the weights' standard deviation (transformers' default 0.02 gives near-constant logits)
LABELS = {0: "negative", 1: "positive"}
WORDPIECE_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]  # ids 0 .. 4: [PAD] = 0, BERT's pad_token_id
BPE_SPECIALS = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]  # ids 0 .. 4: <pad> = 1, RoBERTa's pad_token_id


def wordpiece_tokenizer() -> Tokenizer:
    """A BERT-style WordPiece tokenizer with the [CLS] $A [SEP] post-processor.

    Its vocabulary is laid out here rather than trained (``tokenizers``' WordPiece trainer orders ties differently
    from run to run): the specials, ``HUB_CORPUS``'s words, then every character alone and as a ``##`` piece.
    """
    normalizer, pre_tokenizer = normalizers.BertNormalizer(lowercase=True), pre_tokenizers.BertPreTokenizer()
    words = sorted(
        {w for text in HUB_CORPUS for w, _ in pre_tokenizer.pre_tokenize_str(normalizer.normalize_str(text))}
    )
    characters = sorted(set("".join(words)) | set(string.ascii_lowercase + string.digits + string.punctuation))
    vocab = dict.fromkeys([*WORDPIECE_SPECIALS, *words, *characters, *(f"##{c}" for c in characters)])
    tokenizer = Tokenizer(models.WordPiece({token: i for i, token in enumerate(vocab)}, unk_token="[UNK]"))
    tokenizer.normalizer, tokenizer.pre_tokenizer, tokenizer.decoder = normalizer, pre_tokenizer, decoders.WordPiece()
    tokenizer.add_special_tokens(WORDPIECE_SPECIALS)  # already in the vocabulary: marks them special, as training does
    cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", cls), ("[SEP]", sep)]
    )
    return tokenizer


def bpe_tokenizer() -> Tokenizer:
    """A RoBERTa-style byte-level BPE tokenizer with the <s> $A </s> post-processor."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300, special_tokens=BPE_SPECIALS, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tokenizer.train_from_iterator(HUB_CORPUS, trainer)
    sep, cls = ("</s>", tokenizer.token_to_id("</s>")), ("<s>", tokenizer.token_to_id("<s>"))
    tokenizer.post_processor = processors.RobertaProcessing(sep, cls)  # positional: it takes no keywords
    return tokenizer


def hub_config(family: str, vocab_size: int, **overrides):
    """The tiny config of ``family``, eager attention (the one that returns weights)."""
    import transformers

    sizes = dict(initializer_range=INIT_RANGE, max_position_embeddings=MAX_LEN, id2label=LABELS)
    sizes["label2id"] = {name: i for i, name in LABELS.items()}
    if family == "distilbert":
        config = transformers.DistilBertConfig(
            vocab_size=vocab_size, dim=16, n_layers=2, n_heads=2, hidden_dim=32, **sizes
        )
    else:
        cls = transformers.BertConfig if family == "bert" else transformers.RobertaConfig
        if family == "roberta":  # positions are numbered from pad_token_id + 1 = 2
            sizes |= dict(max_position_embeddings=MAX_LEN + 2, pad_token_id=1, bos_token_id=0, eos_token_id=2)
        config = cls(vocab_size=vocab_size, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=32, **sizes)  # fmt: skip
    for name, value in overrides.items():
        setattr(config, name, value)
    config._attn_implementation = "eager"
    return config


def hub_classifier(family: str, vocab_size: int, seed: int = 0, **overrides) -> torch.nn.Module:
    """A random ``*ForSequenceClassification`` of ``family``, seeded, in eval mode."""
    import transformers

    torch.manual_seed(seed)
    model = transformers.AutoModelForSequenceClassification.from_config(hub_config(family, vocab_size, **overrides))
    return model.eval()


def family_tokenizer(family: str) -> Tokenizer:
    """The tokenizer a ``family`` checkpoint is saved with."""
    return bpe_tokenizer() if family == "roberta" else wordpiece_tokenizer()


def write_hub_checkpoint(folder: Path, family: str, seed: int = 0) -> Path:
    """A checkpoint folder as the Hub holds one: config.json, model.safetensors, tokenizer.json; ``folder``."""
    tokenizer = family_tokenizer(family)
    return save_checkpoint(folder, hub_classifier(family, tokenizer.get_vocab_size(), seed), tokenizer)


def write_sized_bert(folder: Path, layers: int, heads: int, width: int, positions: int, seed: int = 0) -> Path:
    """A random BERT of ``layers`` × ``heads`` × ``width`` reading ``positions`` tokens, with the WordPiece tokenizer,
    saved as ``write_hub_checkpoint`` saves one; ``folder``. Its weights have transformers' own spread (0.02), so its
    attention is spread over the keys, as long as a real model's answers get (peaked weights print shorter)."""
    tokenizer = wordpiece_tokenizer()
    shape = dict(num_hidden_layers=layers, num_attention_heads=heads, hidden_size=width, intermediate_size=2 * width)
    model = hub_classifier(
        "bert", tokenizer.get_vocab_size(), seed, initializer_range=0.02, max_position_embeddings=positions, **shape
    )
    return save_checkpoint(folder, model, tokenizer)


def save_checkpoint(folder: Path, model: torch.nn.Module, tokenizer: Tokenizer) -> Path:
    """``model`` (safetensors) and ``tokenizer`` saved in ``folder``; ``folder``."""
    model.save_pretrained(folder)  # safetensors
    tokenizer.save(str(folder / "tokenizer.json"))
    return folder


def write_deeper_bert(folder: Path) -> Path:
    """A tiny BERT of another shape than the app's tiny model (2 layers of 2 heads), 3 layers of 4 heads; ``folder``."""
    tokenizer = wordpiece_tokenizer()
    classifier = hub_classifier("bert", tokenizer.get_vocab_size(), seed=1, num_hidden_layers=3, num_attention_heads=4)
    classifier.save_pretrained(folder)
    tokenizer.save(str(folder / "tokenizer.json"))
    return folder


def lay_out_hub_cache(
    hub_cache: Path, repo_id: str, files: list[Path], ref: str = "main", commit: str = COMMIT
) -> None:
    """Put files into the cache as the Hub client does: blobs, a snapshot per commit and ``refs/<ref>`` (a branch)
    naming it; call it again with another ``ref`` and ``commit`` for another revision of the same repo."""
    repo = hub_cache / f"models--{repo_id.replace('/', '--')}"
    snapshot = repo / "snapshots" / commit
    snapshot.mkdir(parents=True)
    (repo / "blobs").mkdir(exist_ok=True)
    for file in files:
        blob = repo / "blobs" / f"blob-{commit[:8]}-{file.name}"
        shutil.copyfile(file, blob)
        (snapshot / file.name).symlink_to(os.path.relpath(blob, snapshot))
    (repo / "refs").mkdir(exist_ok=True)
    (repo / "refs" / ref).write_text(commit)
