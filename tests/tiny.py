"""The tiny, seeded, dropout-free classifier that the model and explanation tests build in milliseconds."""

import torch

from transformer import TransformerClassifier

TINY_CONFIG = dict(
    vocab_size=50, num_classes=2, d_model=16, num_heads=2, num_layers=2, d_ff=32, max_len=32, dropout=0.0
)


def tiny_model(seed: int = 0, **overrides) -> TransformerClassifier:
    """A ``TransformerClassifier`` of ``TINY_CONFIG`` (updated by ``overrides``), seeded, in eval mode."""
    torch.manual_seed(seed)
    return TransformerClassifier(**(TINY_CONFIG | overrides)).eval()
