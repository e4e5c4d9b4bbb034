"""The explorer: the page on top of the model and the explanations. Its core is here; the rest is in folders by kind.

Core: what a view is (``registry``), checking and numbering what people send (``inputs``), reading a sentence
(``analysis``), the models loaded once and every call to them (``runner``), one sentence through two models
(``two_models``), answers as JSON (``jsonable``, ``payloads``) and the weights-or-norms switch two tabs share
(``weighting``). Folders: the tabs (``views``), what they draw (``drawing``), the page's wiring (``page``),
serving many people (``serving``) and the corpus views' files (``corpus``).
"""
