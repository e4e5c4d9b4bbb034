"""What the explorer's page needs on top of the model and the explanations: reading a sentence
(``analysis``), checking what people send (``inputs``), the model loaded once (``runner``), colour
scales, shared figure and HTML helpers, export, the page address, and one module per tab (``views``).
"""
