"""Which ``transformers`` model types the explorer loads, and where each keeps the parts the explorer reaches into.

Paths are dotted attribute names, read with ``operator.attrgetter``: ``base`` from the sequence classifier,
``layers`` and ``positions`` from the base model, the rest from one layer. This module imports no
``transformers``, so a missing extra can be reported before anything else is tried.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Family:
    """One architecture family of ``AutoModelForSequenceClassification``.

    Attributes:
        model_type: config.json's ``model_type``.
        classifier: the ``transformers`` class that ``AutoModelForSequenceClassification`` builds for it.
        base: the classifier's encoder attribute (the base model).
        layers: the base model's ``nn.ModuleList`` of layers.
        positions: the base model's position-embedding ``nn.Embedding``.
        output_projection: in a layer, the linear map W_o applied to the heads' concatenated contexts.
        query, key, value: in a layer, the linear maps that make the queries, keys and values (all heads at once).
        feed_forward: in a layer, the first module of the feed-forward, whose input is the stream after attention
            and whose output the layer adds back to it.
        norms: in a layer, the LayerNorm after the attention's residual sum, then the one after the feed-forward's.
        position_offset: rows of the position table before position 0 (RoBERTa numbers positions from
            ``pad_token_id + 1``); True means ``pad_token_id + 1``, False means 0.
    """

    model_type: str
    classifier: str
    base: str
    layers: str
    positions: str
    output_projection: str
    query: str
    key: str
    value: str
    feed_forward: str
    norms: tuple[str, str]
    position_offset: bool = False


FAMILIES = {
    family.model_type: family
    for family in (
        Family(
            "bert",
            "BertForSequenceClassification",
            base="bert",
            layers="encoder.layer",
            positions="embeddings.position_embeddings",
            output_projection="attention.output.dense",
            query="attention.self.query",
            key="attention.self.key",
            value="attention.self.value",
            feed_forward="intermediate",
            norms=("attention.output.LayerNorm", "output.LayerNorm"),
        ),
        Family(
            "distilbert",
            "DistilBertForSequenceClassification",
            base="distilbert",
            layers="transformer.layer",
            positions="embeddings.position_embeddings",
            output_projection="attention.out_lin",
            query="attention.q_lin",
            key="attention.k_lin",
            value="attention.v_lin",
            feed_forward="ffn",
            norms=("sa_layer_norm", "output_layer_norm"),
        ),
        Family(
            "roberta",
            "RobertaForSequenceClassification",
            base="roberta",
            layers="encoder.layer",
            positions="embeddings.position_embeddings",
            output_projection="attention.output.dense",
            query="attention.self.query",
            key="attention.self.key",
            value="attention.self.value",
            feed_forward="intermediate",
            norms=("attention.output.LayerNorm", "output.LayerNorm"),
            position_offset=True,
        ),
    )
}
SUPPORTED = ", ".join(FAMILIES)  # "bert, distilbert, roberta", for error messages


def family_of(model_type: str) -> Family | None:
    """The family of a config.json ``model_type``, or None when the explorer does not load it."""
    return FAMILIES.get(model_type)
