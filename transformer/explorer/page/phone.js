// The phone layout (below `explorerConfig.phone.phonePx` wide), loaded once in the page's <head> (explorer/page/scripts.py).
// The server draws one figure for every screen; this wraps Plotly.react, which Gradio calls for every figure it
// shows, so that each is laid out for the width as plotly draws it, at no second draw (explorer/drawing/theme.py says what
// changes).
(() => {
  "use strict";
  const {phonePx, modebarPx, phoneGridLabels} = explorerConfig.phone;
  const TITLE_LINE_PX = 18;  // one line of a 14 px title
  // Numbers in cells (``figures.cell_text``) are wrapped in a coloured span, which plotly's automatic text size
  // would count as characters: size them here from the cell's width instead, at most plotly's 12 px.
  const fitText = (gd, data, layout) => {
    const margin = layout.margin || {}, width = gd?.clientWidth || window.innerWidth;
    data.forEach((trace) => {
      if (trace.type !== "heatmap" || !trace.texttemplate || trace.textfont?.size) return;
      const cell = (width - (margin.l ?? 80) - (margin.r ?? 80) - 90) / Math.max((trace.x || []).length, 1);
      trace.textfont = {...trace.textfont, size: Math.max(6, Math.min(12, Math.floor(cell / 4)))};
    });
  };
  // The subplots of a grid of small multiples, one per head: heatmaps sharing a colour axis (every head's attention)
  // or bar charts each on axes of its own (the Head atlas).
  const smallMultiples = (data) => {
    const heatmaps = data.filter((trace) => trace.type === "heatmap" && trace.coloraxis);
    if (heatmaps.length > 2) return heatmaps;
    const bars = data.filter((trace) => trace.type === "bar");
    return new Set(bars.map((trace) => trace.xaxis || "x")).size === bars.length ? bars : [];
  };
  const phone = (data, layout) => {
    const width = window.innerWidth;
    if (width > phonePx || !layout) return layout;
    const bar = {orientation: "h", x: 0.5, xanchor: "center", y: 0, yref: "container", yanchor: "bottom",
                  len: 0.9, thickness: 10};
    // A long title breaks before its parenthesis, in a smaller font. Plotly anchors a title of several lines by
    // its first line and draws the others above it, so each added line moves it down one more line height.
    const text = layout.title?.text?.replace(" (", "<br>(");
    const below = modebarPx + (text ? text.split("<br>").length - 1 : 0) * TITLE_LINE_PX;
    const top = (layout.margin?.t ?? 80) + below;  // the title goes under plotly's toolbar (modebar)
    layout = {...layout, margin: {...(layout.margin || {}), l: 4, r: 4, b: 70, t: top}};
    if (text) {
      layout.title = {...layout.title, text, font: {size: 14}, yref: "container", y: 1, yanchor: "top", pad: {t: below}};
    }
    // a horizontal colour bar is already laid out for its own panel (panels.py), and stays over it
    data.forEach((trace) => { if (trace.colorbar && trace.colorbar.orientation !== "h") trace.colorbar = {...trace.colorbar, ...bar}; });
    const axis = layout.coloraxis;
    if (axis) layout.coloraxis = {...axis, colorbar: {...axis.colorbar, ...bar}};
    for (const name of Object.keys(layout)) {
      if (/^[xy]axis\d*$/.test(name)) layout[name] = {...layout[name], tickfont: {size: 9}, automargin: true};
    }
    const cells = smallMultiples(data);
    if (cells.length > 2) {  // small multiples: layer x head subplots, one title each, rearranged in 1 or 2 columns
      const columns = width < 360 ? 1 : 2, rows = Math.ceil(cells.length / columns), gap = 0.04;
      cells.forEach((trace, k) => {
        const row = Math.floor(k / columns), column = k % columns, suffix = (trace.xaxis || "x").slice(1);
        const x = [column / columns + gap / 2, (column + 1) / columns - gap / 2];
        const y = [1 - (row + 1) / rows + gap, 1 - row / rows - gap];
        // the keys' labels under the bottom row, small (none for a long sentence, as on the desktop grid); the
        // queries are the same tokens in the same order, and their labels would take a third of each cell's width
        const labelled = (trace.x || []).length <= phoneGridLabels && row === rows - 1;
        const xaxis = "xaxis" + suffix, yaxis = "yaxis" + (trace.yaxis || "y").slice(1);
        layout[xaxis] = {...layout[xaxis], domain: x, tickfont: {size: 8}, showticklabels: labelled};
        layout[yaxis] = {...layout[yaxis], domain: y, showticklabels: false};
        const title = (layout.annotations || [])[k];
        if (title) Object.assign(title, {x: (x[0] + x[1]) / 2, y: y[1], yanchor: "bottom", font: {size: 11}});
      });
      layout.height = rows * (width / columns) * 0.85 + 140;
    }
    return layout;
  };
  // The toolbar's PNG download is named after the figure's box and the sentence ("walk-plot-the-film-was-dull.png"),
  // not plotly's "newplot.png": Gradio passes plotly no config of ours, so it is added to every draw here.
  const downloadName = (gd, config) => {
    const box = gd?.closest?.(".block[id]")?.id || "figure";
    const sentence = document.querySelector("#sentence textarea")?.value || "";
    const words = sentence.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "-").replace(/^-+|-+$/g, "").slice(0, 40);
    const filename = words ? `${box}-${words}` : box;
    return {...(config || {}), toImageButtonOptions: {...(config?.toImageButtonOptions || {}), filename}};
  };
  let plotly;  // Gradio's plotly bundle sets window.Plotly once, before it draws anything
  Object.defineProperty(window, "Plotly", {
    configurable: true,
    get: () => plotly,
    set: (value) => {
      const react = value.react;
      value.react = (gd, data, layout, config) => {
        layout = phone(data, layout);
        if (layout) fitText(gd, data, layout);
        return react(gd, data, layout, downloadName(gd, config));
      };
      plotly = value;
    },
  });
})();
