"""Beyond raw attention: the mathematics of the explorer's explanations, torch and numpy only.

Every function works on one unpadded sentence, ``input_ids`` of shape (1, N), with the model in
eval mode, and takes ids, never a tokenizer. Layers and heads are the model's 0-based indices.
Each module has one job:

- ``run``: ``predict``, the shared forward pass.
- ``rollout``: attention rollout and its reading for the mean-pooled output.
- ``attribution``: gradient × input and Integrated Gradients for a target class.
- ``agreement``: Spearman rank correlation between the methods.
- ``faithfulness``: erasure (ERASER): comprehensiveness, sufficiency and AOPC per method, a random floor.
- ``head``: inside one head, QKᵀ, QKᵀ/√d_k, softmax and entropy.
- ``knockout``: head knockout and head importance.
- ``counterfactual``: removing or masking a token; word order with and without positional encoding.
- ``compare``: two sentences through one head, aligned.
- ``walkthrough``: one forward pass, every step the tutorial walks through, captured by hooks.
- ``patching``: activation patching between two sentences, per stage × position and per head.
- ``attention_norms``: attention weighted by the norm of what each key moves (Kobayashi et al. 2020).
- ``layer_readout``: the class read out from the residual stream after every layer.
- ``routes``: each block's output split into parts, and each part's importance to its sum (ALTI's proximity rule).
- ``route_graph``: the contribution graph from those importances: the flow from the class down, the kept edges.
- ``batching``: how many rows of a sentence a heavy method runs in one pass, from the model's size.
- ``heap``: the memory that passes freed handed back to the system (glibc's ``malloc_trim``).

The explorer (``transformer.explorer``) builds its views on these; nothing here imports it.
"""

from .agreement import METHODS, Agreement, agreement_of, average_ranks, method_agreement, spearman_matrix
from .attribution import (
    COMPLETENESS_ATOL,
    COMPLETENESS_RTOL,
    DEFAULT_IG_STEPS,
    IntegratedGradients,
    gradient_x_input,
    integrated_gradients,
)
from .compare import Comparison, align_tokens, aligned_difference, compare_attentions, compare_sentences
from .counterfactual import (
    Perturbation,
    WordOrder,
    perturb_token,
    sentence_permutation,
    shuffled_permutation,
    word_order_experiment,
)
from .head import HeadScores, attention_entropy, head_scores, layer_input
from .knockout import HeadImportance, head_importance, predict_with_knockout
from .rollout import attention_rollout, pooled_attention, pooled_relevance, stack_attentions
from .run import Prediction, check_sentence, predict

__all__ = [
    "COMPLETENESS_ATOL",
    "COMPLETENESS_RTOL",
    "DEFAULT_IG_STEPS",
    "METHODS",
    "Agreement",
    "Comparison",
    "HeadImportance",
    "HeadScores",
    "IntegratedGradients",
    "Perturbation",
    "Prediction",
    "WordOrder",
    "agreement_of",
    "align_tokens",
    "aligned_difference",
    "attention_entropy",
    "attention_rollout",
    "average_ranks",
    "check_sentence",
    "compare_attentions",
    "compare_sentences",
    "gradient_x_input",
    "head_importance",
    "head_scores",
    "integrated_gradients",
    "layer_input",
    "method_agreement",
    "perturb_token",
    "pooled_attention",
    "pooled_relevance",
    "predict",
    "predict_with_knockout",
    "sentence_permutation",
    "shuffled_permutation",
    "spearman_matrix",
    "stack_attentions",
    "word_order_experiment",
]
