"""The explorer's tabs, one module each, in the order the page shows them; ``app.py`` makes a ``Registry`` of them.

To add a view, write one module with a ``VIEW`` (see ``registry.View`` and CONTRIBUTING.md) and list it here.
"""

from . import (
    all_heads,
    attention,
    attributions,
    behaviour,
    compare,
    errors,
    export,
    head_atlas,
    inside_head,
    knockout,
    patching,
    perturb,
    positional_encoding,
    rollout,
    routes,
    token_embeddings,
    training,
    walkthrough,
    word_order,
)

VIEWS = [
    attention.VIEW,
    all_heads.VIEW,
    positional_encoding.VIEW,
    walkthrough.VIEW,
    rollout.VIEW,
    attributions.VIEW,
    inside_head.VIEW,
    knockout.VIEW,
    perturb.VIEW,
    word_order.VIEW,
    compare.VIEW,
    patching.VIEW,
    routes.VIEW,
    export.VIEW,
    token_embeddings.VIEW,
    training.VIEW,
    head_atlas.VIEW,
    errors.VIEW,
    behaviour.VIEW,
]
