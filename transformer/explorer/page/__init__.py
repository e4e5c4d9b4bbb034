"""The page's wiring: when each part draws (``events``), how a view's events run its draw (``draws``), reading the
sentence (``page``), the address and "Copy link" (``address``), the page load (``restore``), the endpoints (``api``),
the launch settings (``launch``), the configuration the page inlines (``page_config``) and the JavaScript
(``scripts``, ``page.js``, ``answer_stream.js``, ``phone.js``). Only app.py imports it; views reach only ``scripts``.
"""
