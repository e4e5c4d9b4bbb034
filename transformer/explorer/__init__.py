"""The explorer: the page on top of the model and the explanations. Its core is here; the rest is in folders by kind.

Core: what a view is (``registry``), checking and numbering what people send (``inputs``), reading a sentence
(``analysis``), the models loaded once and every call to them (``runner``, whose jobs' threads ``thread_names``
names), one sentence through two models
(``two_models``) and answers as JSON (``jsonable``, ``payloads``). Folders: the tabs (``views``), what more than
one tab shares (``controls``), what they draw (``drawing``), the page's wiring (``page``), serving many people
(``serving``) and the corpus views' files (``corpus``).
"""
