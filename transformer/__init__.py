"""The Transformer from "Getting Started with Transformers in PyTorch", correct for padded batches.

``load_model(source)`` reads one from a folder or the Hub: ``config.json``, ``model.safetensors`` and
``tokenizer.json`` in one call.
"""

from .attention import MultiHeadAttention, scaled_dot_product_attention
from .classifier import TransformerClassifier
from .encoder_block import TransformerEncoderBlock
from .feed_forward import PositionWiseFeedForward
from .loading import LoadedModel, ModelLoadError, load_model
from .positional_encoding import PositionalEncoding, sinusoidal_table

__all__ = [
    "LoadedModel",
    "ModelLoadError",
    "MultiHeadAttention",
    "PositionWiseFeedForward",
    "PositionalEncoding",
    "TransformerClassifier",
    "TransformerEncoderBlock",
    "load_model",
    "scaled_dot_product_attention",
    "sinusoidal_table",
]
