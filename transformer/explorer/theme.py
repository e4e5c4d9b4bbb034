"""The page's style sheet: figures that follow the page's light or dark theme, and a layout that fits a phone.

Figures are drawn once, on the server, with a transparent background (``figures.TEMPLATE``); the page's
theme is known only in the browser (Gradio puts ``dark`` on ``<body>`` for ``?__theme=dark`` and for a dark
``prefers-color-scheme``), so the style sheet does the rest:

- in the dark theme, a figure's text takes the page's text colour, grid lines are faint, and the colour
  of heatmaps and colour bars is inverted with its hue kept (``invert`` then ``hue-rotate(180deg)``): the
  background end of each scale becomes dark and the strong end light, so a brighter cell is still more
  weight (on the light page, darker is more), and a diverging scale keeps red for more and blue for less;
- under ``PHONE_PX`` wide, rows stack, figures take the whole width and nothing scrolls the page sideways
  (a wide figure scrolls inside its own box).
"""

PHONE_PX = 640  # below this page width the layout is the phone's

# Plotly writes fills as inline styles; a style sheet's !important wins over them.
_DARK = """
.dark .js-plotly-plot text:not(.hoverlayer *) { fill: var(--body-text-color) !important; }
.dark .js-plotly-plot :is(.gridlayer, .zerolinelayer) path { stroke: rgba(255, 255, 255, 0.12) !important; }
.dark .js-plotly-plot :is(.heatmaplayer image, .colorbar .cbfill) { filter: invert(1) hue-rotate(180deg); }
.dark .explain-html th, .dark .explain-html td { border-color: var(--border-color-primary); }
"""
_PHONE = f"""
@media (max-width: {PHONE_PX}px) {{
  .gradio-container {{ padding-left: 4px !important; padding-right: 4px !important; }}
  .gradio-container .row {{ flex-direction: column; }}
  .gradio-container .row > * {{ min-width: 0 !important; width: 100%; }}
  .js-plotly-plot, .js-plotly-plot .plot-container {{ max-width: 100%; }}
}}
"""
PAGE_CSS = (
    "#tokens .label { text-transform: none; }"  # token categories keep their case: "##o" is not "##O"
    " .explain-html table { border-collapse: collapse; margin: 0.5em 0; }"
    " .explain-html th, .explain-html td { border: 1px solid #ddd; padding: 2px 8px; text-align: right; }"
    + _DARK
    + _PHONE
)
