"""Training and evaluation: data files, the mixture, the objectives, one resumable loop, scoring, the model card.

The commands are ``python -m transformer.train`` and ``python -m transformer.evaluate``. Nothing here is
imported by the model, the explanations or the explorer.
"""
