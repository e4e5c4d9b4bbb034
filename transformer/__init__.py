"""The Transformer from "Getting Started with Transformers in PyTorch", correct for padded batches."""

from .attention import MultiHeadAttention, scaled_dot_product_attention
from .classifier import TransformerClassifier
from .encoder_block import TransformerEncoderBlock
from .feed_forward import PositionWiseFeedForward
from .positional_encoding import PositionalEncoding, sinusoidal_table

__all__ = [
    "MultiHeadAttention",
    "PositionWiseFeedForward",
    "PositionalEncoding",
    "TransformerClassifier",
    "TransformerEncoderBlock",
    "scaled_dot_product_attention",
    "sinusoidal_table",
]
