"""A ``HubClassifier`` and its tokenizer from a folder holding a ``transformers`` checkpoint.

The folder is a local model folder or a Hub snapshot that ``transformer.loading`` resolved: config.json,
model.safetensors (or model.safetensors.index.json and the shards it names, checked there) and tokenizer.json.
The weights load through ``AutoModelForSequenceClassification``, which reads a sharded index itself, with
safetensors only, local files only and ``trust_remote_code`` off; every tensor of the classifier must be in
the file or the shards. The tokenizer is the checkpoint's own tokenizer.json read by ``tokenizers``, with its
post-processor, so ``tokenizer.encode(text)`` adds the [CLS]/[SEP] (or <s>/</s>) the model was trained with.
"""

from pathlib import Path
from typing import cast

import torch
from tokenizers import Tokenizer
from transformers import AutoModelForSequenceClassification, PreTrainedModel

from .adapter import HubClassifier
from .families import Family


class HubLoadError(Exception):
    """The checkpoint could not be loaded; ``transformer.loading`` prefixes the message with its source."""


def read_hub_model(folder: Path, family: Family, device: torch.device) -> tuple[HubClassifier, Tokenizer]:
    """The classifier in eval mode on ``device``, wrapped in a ``HubClassifier``, and its tokenizer.

    Args:
        folder: holds config.json, model.safetensors (or model.safetensors.index.json and its shards) and
            tokenizer.json.
        family: the family of config.json's ``model_type``.
        device: where the parameters go.

    Raises:
        HubLoadError: the weights are not this family's sequence classifier, do not match config.json or are
            unreadable; the tokenizer is unreadable, adds no special tokens or has ids the model lacks.
    """
    classifier = _read_classifier(folder, family)
    tokenizer = _read_tokenizer(folder / "tokenizer.json")
    rows = cast(torch.nn.Embedding, classifier.get_input_embeddings()).num_embeddings  # the word embeddings
    if tokenizer.get_vocab_size() > rows:
        raise HubLoadError(
            f"tokenizer.json has {tokenizer.get_vocab_size()} tokens but the model's embedding has {rows} rows; "
            "the files come from different models"
        )
    special = {i for i, token in tokenizer.get_added_tokens_decoder().items() if token.special}
    added = tokenizer.encode("").ids  # what the post-processor puts around any text: [CLS] [SEP], <s> </s>
    model = HubClassifier(classifier, family, special_token_ids=special, added_token_ids=added)
    return model.to(device).eval(), tokenizer


def _read_classifier(folder: Path, family: Family) -> PreTrainedModel:
    """``AutoModelForSequenceClassification`` from safetensors weights in float32, strictly: no tensor left random."""
    try:
        classifier, info = AutoModelForSequenceClassification.from_pretrained(
            str(folder),
            attn_implementation="eager",
            dtype=torch.float32,
            use_safetensors=True,
            trust_remote_code=False,
            local_files_only=True,
            output_loading_info=True,
        )
    except (OSError, ValueError, RuntimeError, KeyError, TypeError) as error:
        raise HubLoadError(f"transformers could not load the checkpoint ({_first_line(error)})") from None
    if type(classifier).__name__ != family.classifier:
        raise HubLoadError(f"config.json builds a {type(classifier).__name__}, not a {family.classifier}")
    missing, mismatched = list(info["missing_keys"]), list(info["mismatched_keys"])
    if missing or mismatched:
        example = (missing or [str(mismatched[0])])[0]
        sharded = not (folder / "model.safetensors").is_file()
        weights = "model.safetensors.index.json (with its shards)" if sharded else "model.safetensors"
        raise HubLoadError(
            f"{weights} does not hold every tensor of a {family.classifier} built from config.json "
            f"({len(missing)} missing, {len(mismatched)} of other shapes, e.g. {example}); "
            "is it a sequence-classification checkpoint?"
        )
    return classifier


def _read_tokenizer(path: Path) -> Tokenizer:
    """tokenizer.json as it encodes for the model: its post-processor on, padding and truncation off."""
    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as error:  # tokenizers raises a bare Exception for unreadable files
        raise HubLoadError(f"tokenizer.json is not a valid tokenizer file ({_first_line(error)})") from None
    if tokenizer.post_processor is None:
        raise HubLoadError("tokenizer.json has no post-processor, so it would not add the [CLS]/[SEP] the model reads")
    tokenizer.no_padding()
    tokenizer.no_truncation()  # the explorer cuts to max_len itself and says so
    return tokenizer


def _first_line(error: Exception) -> str:
    """An error's message on one line, for a one-line ModelLoadError."""
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__
