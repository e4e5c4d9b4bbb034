"""The page's style sheet: figures that follow the page's light or dark theme, and a layout that fits a phone.

Figures are drawn once, on the server, with a transparent background (``figures.TEMPLATE``); the page's
theme is known only in the browser (Gradio puts ``dark`` on ``<body>`` for ``?__theme=dark`` and for a dark
``prefers-color-scheme``), so the style sheet does the rest:

- in the dark theme, a figure's text takes the page's text colour, grid lines are faint, and the colour
  of heatmaps and colour bars is inverted with its hue kept (``invert`` then ``hue-rotate(180deg)``): the
  background end of each scale becomes dark and the strong end light, so a brighter cell is still more
  weight (on the light page, darker is more), and a diverging scale keeps red for more and blue for less;
- under ``PHONE_PX`` wide, rows stack, figures take the whole width and nothing scrolls the page sideways;
  ``phone.js`` lays each figure out for the width as plotly draws it (the server draws one figure for every
  screen): colour bars go under the plot, tick labels get smaller (plotly already thins them to what fits),
  the axes size their margins to them (``automargin``, which desktop heatmaps do without), a grid of
  small multiples (every head) goes to two columns, one under 360 px, its keys labelled under the bottom row,
  a row of panels that asks for it (``figures.STACKED_ON_PHONE``) is stacked, a legend along the foot
  (``figures.LEGEND_BELOW``) adds its rows to the figure's height, and titles wrap between words and move under
  plotly's toolbar (the modebar, over the top right corner).
"""

PHONE_PX = 640  # below this page width the layout is the phone's
PHONE_GRID_LABELS = 40  # a phone's grid of small multiples labels its tokens up to this many (as the desktop's)
MODEBAR_PX = 30  # plotly's toolbar, over a figure's top right corner: titles go under it on a phone

# Plotly writes fills as inline styles; a style sheet's !important wins over them. A cell's number carries its
# dark-theme colour as ``--dark`` (``figures.cell_text``), since the dark theme inverts the cells. A colour bar is
# inverted with them only in a figure of heatmaps: a scatter's points (Token embeddings) keep their colours, and so
# must its colour bar.
_DARK = """
.dark .js-plotly-plot text:not(.hoverlayer *) { fill: var(--body-text-color) !important; }
.dark .js-plotly-plot :is(.gridlayer, .zerolinelayer) path { stroke: rgba(255, 255, 255, 0.12) !important; }
.dark .js-plotly-plot .heatmaplayer image,
.dark .js-plotly-plot:has(.heatmaplayer image) .colorbar .cbfill { filter: invert(1) hue-rotate(180deg); }
.dark #views .explain-html :is(th, td) { border-color: var(--border-color-primary); }
.dark .js-plotly-plot .heatmap-label tspan[style*="--dark"] { fill: var(--dark) !important; }
"""

# The views' tab bar wraps (``gr.Tabs(overflow_behavior="wrap")``); on a phone each tab is a finger's target.
_TABS = f"""
@media (max-width: {PHONE_PX}px) {{
  #views button[role="tab"] {{ min-height: 44px; height: auto; padding: 0 10px; }}
}}
#views button[role="tab"].selected {{ color: var(--body-text-color); font-weight: 600; }}  /* the accent was 2.8:1 */
.gradio-container input:is([type="radio"], [type="checkbox"]):focus-visible {{
  outline: 3px solid var(--body-text-color); outline-offset: 2px; }}  /* Gradio's own ring is faint */
#copy-link-field {{ margin-top: 6px; padding: 6px 8px; font-size: 0.85em; border: 1px solid var(--border-color-primary);
  border-radius: var(--radius-sm); background: var(--input-background-fill); color: var(--body-text-color); }}
"""
# Gradio's default theme fails WCAG AA (4.5:1) on the Analyze button (white on orange, 2.8:1; 3.6:1 on the dark
# page's) and, on the light page, its subdued text (footer, a slider's ends, 1.9:1). The dark theme is set on
# <body>: the variables set on the page's container under it win over the theme's, and ``:root:root`` over ``:root``.
BUTTON_FILL, BUTTON_HOVER, SUBDUED_TEXT = "#c2410c", "#9a3412", "#52525b"  # white on them: 5.2:1, 7.3:1; 7.7:1 on white
CANCEL_FILL = "#b91c1c"  # a Cancel button's (variant "stop"): white on it 6.5:1 (was 3.8)
CANCEL_HOVER = "#991b1b"  # and under the pointer: 8.3:1
_CONTRAST = f"""
:root:root {{ --button-primary-background-fill: {BUTTON_FILL}; --button-primary-background-fill-hover: {BUTTON_HOVER};
  --body-text-color-subdued: {SUBDUED_TEXT}; --button-cancel-background-fill: {CANCEL_FILL};
  --button-cancel-background-fill-hover: {CANCEL_HOVER}; --button-cancel-text-color: white; }}
.dark .gradio-container {{ --button-primary-background-fill: {BUTTON_FILL};
  --button-primary-background-fill-hover: {BUTTON_HOVER}; --button-cancel-background-fill: {CANCEL_FILL};
  --button-cancel-background-fill-hover: {CANCEL_HOVER}; --button-cancel-text-color: white; }}
"""
# The Tokens panel's position badges: Gradio writes white on its category colours (1.9 to 3.7:1); the page's text
# colour, its background behind, reads in either theme (the chip around it keeps its category colour).
# The Walkthrough's code (a fenced block that the page's Markdown highlights, ``walkthrough.code_block``): token
# colours that reach 4.5:1 on the code's background in each theme (Gradio's reached 2.0:1), and long lines wrap
# rather than make a scroll box of the block on a phone.
CODE_LIGHT = {"keyword": "#a40e26", "string": "#0a3069", "comment": "#57606a", "function": "#6639ba",
              "class-name": "#6639ba", "number": "#0550ae", "boolean": "#0550ae", "builtin": "#953800",
              "decorator": "#953800", "operator": "#a40e26", "punctuation": "#24292f"}  # fmt: skip
CODE_DARK = {"keyword": "#ff7b72", "string": "#a5d6ff", "comment": "#9ca3af", "function": "#d2a8ff",
             "class-name": "#d2a8ff", "number": "#79c0ff", "boolean": "#79c0ff", "builtin": "#ffa657",
             "decorator": "#ffa657", "operator": "#ff7b72", "punctuation": "#e5e7eb"}  # fmt: skip
_CODE = (
    "#tokens .label { background-color: var(--body-text-color) !important; color: var(--background-fill-primary); }"
    "#walk-code pre, #walk-code pre code { white-space: pre-wrap; overflow-wrap: anywhere; }"
    + "".join(f"#walk-code .token.{name} {{ color: {colour}; }}" for name, colour in CODE_LIGHT.items())
    + "".join(f".dark #walk-code .token.{name} {{ color: {colour}; }}" for name, colour in CODE_DARK.items())
)
# Tables scroll sideways inside themselves rather than lose their last columns; headers break between words only.
# A view's own HTML table (Head knockout, Token perturbation, Compare, faithfulness, Behaviour) is its own scroll box.
# A table wider than its box shows a shadow at the edge it scrolls on (the shadows scroll with the box, the covers
# with the table: "scroll shadows"), so a phone's two visible columns say there are more.
_TABLES = """
#views .prose table { display: block; max-width: 100%; overflow-x: auto;
  background:
    linear-gradient(to right, var(--background-fill-primary) 30%, transparent) left / 24px 100% no-repeat local,
    linear-gradient(to left, var(--background-fill-primary) 30%, transparent) right / 24px 100% no-repeat local,
    radial-gradient(farthest-side at 0 50%, rgba(0, 0, 0, 0.3), transparent) left / 12px 100% no-repeat scroll,
    radial-gradient(farthest-side at 100% 50%, rgba(0, 0, 0, 0.3), transparent) right / 12px 100% no-repeat scroll; }
#atlas-table .table-container { overflow-x: auto; }
#atlas-table .virtual-table-viewport { max-width: 100%; overflow-x: auto; }
:is(#atlas-table, #errors-table) thead :is(th, th *) { word-break: normal; overflow-wrap: normal; }
"""
_PHONE = f"""
@media (max-width: {PHONE_PX}px) {{
  .gradio-container {{ padding-left: 4px !important; padding-right: 4px !important; }}
  .gradio-container .row {{ flex-direction: column; }}
  .gradio-container .row > * {{ min-width: 0 !important; width: 100%; }}
  /* the same with an id: Gradio scopes a page's style sheet under its container, and a row of unequal heights kept
     its side by side (Head knockout's table got 150 of 326 px, two of its four columns) */
  #views .row {{ flex-direction: column; align-items: stretch; }}
  #views .row > * {{ min-width: 0 !important; width: 100%; }}
  .js-plotly-plot, .js-plotly-plot .plot-container {{ max-width: 100%; }}
  #tokens .textfield {{ max-height: 8rem; }}  /* about four rows of chips on a phone, whose rows hold fewer */
}}
"""
# In the page's <head>, so it holds from the first paint: Gradio draws a navbar for the page out of it (the endpoints'
# page, ``page/api.py``), one link, "Home", alone on the blank page for 0.4-2 s of the load before the components mount
# and ``gr.Navbar(visible="hidden")`` hides it. (``PAGE_CSS`` comes with the components, and scoped under them.)
HEAD_CSS = ".nav-holder { display: none; }"
PAGE_CSS = (
    "#tokens .label { text-transform: none; }"  # token categories keep their case: "##o" is not "##O"
    # About six rows of chips, then the panel scrolls: 256 chips once pushed the tabs 1,400 px down (issue 54)
    " #tokens .textfield { max-height: 12.5rem; overflow-y: auto; }"
    " .explain-html table { border-collapse: collapse; margin: 0.5em 0; }"
    # an id, so that the compact cells win over Gradio's prose tables (Behaviour's per-capability table was 424 px
    # wide on a phone's 300, and cut in the middle of its fourth column)
    " #views .explain-html :is(th, td) { border: 1px solid #ddd; padding: 2px 8px; text-align: right; }"
    + _DARK
    + _TABS
    + _CONTRAST
    + _CODE
    + _TABLES
    + _PHONE
)
