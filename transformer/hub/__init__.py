"""Hugging Face ``transformers`` sequence classifiers (BERT, DistilBERT, RoBERTa) behind the explorer's model interface.

- ``families``: which ``model_type`` values load, and where each family keeps its layers, heads and position
  embeddings (no ``transformers`` import: ``transformer.loading`` reads it to dispatch);
- ``hooks``: the per-call forward hooks that knock heads out and switch the position embeddings off;
- ``adapter``: ``HubClassifier``, a ``transformers`` classifier with ``TransformerClassifier``'s forward;
- ``loading``: a ``HubClassifier`` and its tokenizer from a folder of config.json, model.safetensors and
  tokenizer.json.

``transformers`` is an optional extra (``pip install -r requirements-hub.txt``); only ``families`` imports
without it.
"""
