"""Beyond raw attention: the explorer's analyses in one import (the figures are in ``explain_figures``).

Every function works on one unpadded sentence, ``input_ids`` of shape (1, N), with the model in
eval mode, and takes ids, never a tokenizer. Each lives in a module with one job:

- ``explain_run``: ``predict``, the shared forward pass.
- ``explain_rollout``: attention rollout and its reading for the mean-pooled output.
- ``explain_attribution``: gradient × input and Integrated Gradients for a target class.
- ``explain_agreement``: Spearman rank correlation between the methods.
- ``explain_head``: inside one head, QKᵀ, QKᵀ/√d_k, softmax and entropy.
- ``explain_knockout``: head knockout and head importance.
- ``explain_counterfactual``: removing or masking a token; word order with and without positional encoding.
- ``explain_compare``: two sentences through one head, aligned.
- ``explain_colour``: colour ranges for attention views.
- ``explain_export``: JSON and CSV export.

The app's tabs and endpoints are built on these by ``explain_views`` (one view's numbers from an
analysed sentence and its controls) and ``explain_panels`` (what a tab shows).
"""

from .explain_agreement import METHODS, Agreement, agreement_of, average_ranks, method_agreement, spearman_matrix
from .explain_attribution import (
    COMPLETENESS_ATOL,
    COMPLETENESS_RTOL,
    DEFAULT_IG_STEPS,
    IntegratedGradients,
    gradient_x_input,
    integrated_gradients,
)
from .explain_colour import colour_limit, normalise_attention
from .explain_compare import Comparison, align_tokens, aligned_difference, compare_attentions, compare_sentences
from .explain_counterfactual import (
    Perturbation,
    WordOrder,
    perturb_token,
    shuffled_permutation,
    word_order_experiment,
)
from .explain_export import analysis_to_json, attention_to_csv, to_jsonable
from .explain_head import HeadScores, attention_entropy, head_scores, layer_input
from .explain_knockout import HeadImportance, head_importance, predict_with_knockout
from .explain_rollout import attention_rollout, pooled_attention, pooled_relevance, stack_attentions
from .explain_run import Prediction, check_sentence, predict

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
    "analysis_to_json",
    "attention_entropy",
    "attention_rollout",
    "attention_to_csv",
    "average_ranks",
    "check_sentence",
    "colour_limit",
    "compare_attentions",
    "compare_sentences",
    "gradient_x_input",
    "head_importance",
    "head_scores",
    "integrated_gradients",
    "layer_input",
    "method_agreement",
    "normalise_attention",
    "perturb_token",
    "pooled_attention",
    "pooled_relevance",
    "predict",
    "predict_with_knockout",
    "shuffled_permutation",
    "spearman_matrix",
    "stack_attentions",
    "to_jsonable",
    "word_order_experiment",
]
