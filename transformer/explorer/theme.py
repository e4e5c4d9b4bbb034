"""The page's style sheet: figures that follow the page's light or dark theme, and a layout that fits a phone.

Figures are drawn once, on the server, with a transparent background (``figures.TEMPLATE``); the page's
theme is known only in the browser (Gradio puts ``dark`` on ``<body>`` for ``?__theme=dark`` and for a dark
``prefers-color-scheme``), so the style sheet does the rest:

- in the dark theme, a figure's text takes the page's text colour, grid lines are faint, and the colour
  of heatmaps and colour bars is inverted with its hue kept (``invert`` then ``hue-rotate(180deg)``): the
  background end of each scale becomes dark and the strong end light, so a brighter cell is still more
  weight (on the light page, darker is more), and a diverging scale keeps red for more and blue for less;
- under ``PHONE_PX`` wide, rows stack, figures take the whole width and nothing scrolls the page sideways;
  ``PHONE_JS`` lays each figure out for the width as plotly draws it (the server draws one figure for every
  screen): colour bars go under the plot, tick labels get smaller (plotly already thins them to what fits),
  the axes size their margins to them (``automargin``, which desktop heatmaps do without), and a grid of
  small multiples (every head) goes to two columns, one under 360 px.
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

# Wraps Plotly.react, which Gradio calls for every figure it shows, so the phone layout costs no second draw.
PHONE_JS = f"""
<script>
(() => {{
  const phone = (data, layout) => {{
    const width = window.innerWidth;
    if (width > {PHONE_PX} || !layout) return layout;
    const bar = {{orientation: "h", x: 0.5, xanchor: "center", y: 0, yref: "container", yanchor: "bottom",
                  len: 0.9, thickness: 10}};
    layout = {{...layout, margin: {{...(layout.margin || {{}}), l: 4, r: 4, b: 70}}}};
    if (layout.title?.text) {{  // a long title breaks before its parenthesis, in a smaller font
      layout.title = {{...layout.title, text: layout.title.text.replace(" (", "<br>("), font: {{size: 14}}}};
    }}
    data.forEach((trace) => {{ if (trace.colorbar) trace.colorbar = {{...trace.colorbar, ...bar}}; }});
    const axis = layout.coloraxis;
    if (axis) layout.coloraxis = {{...axis, colorbar: {{...axis.colorbar, ...bar}}}};
    for (const name of Object.keys(layout)) {{
      if (/^[xy]axis\\d*$/.test(name)) layout[name] = {{...layout[name], tickfont: {{size: 9}}, automargin: true}};
    }}
    const cells = data.filter((trace) => trace.type === "heatmap" && trace.coloraxis);
    if (cells.length > 2) {{  // small multiples: layer x head subplots, one title each, rearranged in 1 or 2 columns
      const columns = width < 360 ? 1 : 2, rows = Math.ceil(cells.length / columns), gap = 0.04;
      cells.forEach((trace, k) => {{
        const row = Math.floor(k / columns), column = k % columns, suffix = (trace.xaxis || "x").slice(1);
        const x = [column / columns + gap / 2, (column + 1) / columns - gap / 2];
        const y = [1 - (row + 1) / rows + gap, 1 - row / rows - gap];
        layout["xaxis" + suffix] = {{...layout["xaxis" + suffix], domain: x, showticklabels: false}};
        const yaxis = "yaxis" + (trace.yaxis || "y").slice(1);
        layout[yaxis] = {{...layout[yaxis], domain: y, showticklabels: false}};
        const title = (layout.annotations || [])[k];
        if (title) Object.assign(title, {{x: (x[0] + x[1]) / 2, y: y[1], yanchor: "bottom", font: {{size: 11}}}});
      }});
      layout.height = rows * (width / columns) * 0.85 + 140;
    }}
    return layout;
  }};
  let plotly;  // Gradio's plotly bundle sets window.Plotly once, before it draws anything
  Object.defineProperty(window, "Plotly", {{
    configurable: true,
    get: () => plotly,
    set: (value) => {{
      const react = value.react;
      value.react = (gd, data, layout, config) => react(gd, data, phone(data, layout), config);
      plotly = value;
    }},
  }});
}})();
</script>
"""
