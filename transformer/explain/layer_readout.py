"""The class read out after every layer: a "logit lens" for a classifier.

Shape letters: L = layers, N = tokens, D = d_model, C = classes.

The residual stream after the embeddings and after each block goes through the model's own final steps: for the
tutorial's model the final LayerNorm, the mean of the tokens and the MLP head; for a Hub model its [CLS] pooler
(or DistilBERT's pre-classifier) and head. Rather than copying those steps per architecture, one run's last block
output becomes L + 1 rows, each the stream of one stage (``patching.replace_hook``), so what reads them is the
model's own code. The last stage is the forward pass itself.
"""

import torch

from ..hub import hooks
from ..interface import Classifier
from .patching import activations, replace_hook
from .run import check_sentence


@torch.inference_mode()
def layer_readout(model: Classifier, input_ids: torch.Tensor) -> torch.Tensor:
    """The logits the model's final steps give for the residual stream at every stage.

    Args:
        model: the classifier, in eval mode.
        input_ids: one sentence, no padding.

    Shape:
        input_ids: (1, N). Returns (L + 1, C): row 0 after the embeddings, row s after block s.
    """
    check_sentence(model, input_ids)
    states = activations(model, input_ids)[0].states  # (L + 1, N, D)
    stages, n = states.size(0), states.size(1)
    rows = torch.arange(stages, device=input_ids.device).repeat_interleave(n)  # (S·N,): stage s for row s
    positions = torch.arange(n, device=input_ids.device).repeat(stages)  # (S·N,)
    last = model.stage_modules()[-1]
    every_stage = replace_hook(rows, positions, states.reshape(stages * n, -1), copies=stages)  # values (S·N, D)
    with hooks.added([(last, every_stage, "post")]):
        return model(input_ids)  # (L + 1, C)


def committed_stage(logits: torch.Tensor) -> int:
    """The first stage from which the class read out stays the final class: 0 (already after the embeddings) to L
    (only the last layer gives it: a late flip).

    Shape:
        logits: (L + 1, C), as ``layer_readout`` gives.
    """
    classes = logits.argmax(dim=-1)  # (L + 1,)
    other = (classes != classes[-1]).nonzero()[:, 0]  # the stages that read out another class
    return int(other[-1]) + 1 if len(other) else 0
