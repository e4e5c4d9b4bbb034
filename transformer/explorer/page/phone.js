// The page's draws, loaded once in the page's <head> (explorer/page/scripts.py). This wraps Plotly.react, which Gradio
// calls for every figure it shows: the phone layout (below `explorerConfig.phone.phonePx` wide; the server draws one
// figure for every screen, and each is laid out for the width as plotly draws it, at no second draw:
// explorer/drawing/theme.py says what changes), the PNG download's name, and one draw per new figure (a seam on
// Gradio's `Plot`, listed in serving/gradio_seam.py).
(() => {
  "use strict";
  const {phonePx, modebarPx, phoneGridLabels, legendBelow: LEGEND_BELOW} = explorerConfig.phone;
  // one line of a 14 px title
  const TITLE_LINE_PX = 18;
  // about the widest a 14 px title's average character is
  const TITLE_CHAR_PX = 7.5;
  // a legend's row; an entry's line and name
  const LEGEND_ROW_PX = 20, LEGEND_SYMBOL_PX = 50, LEGEND_CHAR_PX = 7.5;
  // a stacked panel's plot, and the room under it (ticks, axis and next title)
  const PANEL_PX = 190, PANEL_GAP_PX = 110;
  // A long title breaks before its parenthesis, and any line still longer than the phone is wide between words:
  // plotly never wraps a title, and cut it at the figure's edges.
  const wrapTitle = (text, width) => {
    const most = Math.max(20, Math.floor((width - 16) / TITLE_CHAR_PX));
    return text.replace(" (", "<br>(").split("<br>").map((line) => {
      if (line.length <= most || line.includes("<")) return line;
      const lines = [""];
      for (const word of line.split(" ")) {
        const last = lines[lines.length - 1];
        if (last && last.length + 1 + word.length > most) lines.push(word);
        else lines[lines.length - 1] = last ? `${last} ${word}` : word;
      }
      return lines.join("<br>");
    }).join("<br>");
  };
  // A row of panels side by side that asks to be stacked on a phone (``layout.meta.stacked_on_phone``, set by
  // ``figures.STACKED_ON_PHONE``: Inside one head, Token embeddings), each trace on its panel's own axes: the
  // panels go one under another, each the page's width, its title (the paper annotation over it) above it. Side by
  // side at a phone's width, their titles ran into one another.
  const stackPanels = (data, layout) => {
    const panel = (trace) => (trace.xaxis || "x").slice(1);
    const suffixes = [...new Set(data.map(panel))];
    if (!layout.meta?.stacked_on_phone || suffixes.length < 2) return;
    const domain = (name) => layout[name]?.domain || [0, 1];
    suffixes.sort((a, b) => domain("xaxis" + a)[0] - domain("xaxis" + b)[0]);
    const plot = suffixes.length * PANEL_PX + (suffixes.length - 1) * PANEL_GAP_PX;
    layout.annotations = (layout.annotations || []).map((note) => ({...note}));
    const titles = new Set(layout.annotations.filter((note) => note.xref === "paper" && note.yref === "paper"));
    suffixes.forEach((s, k) => {
      const [left, right] = domain("xaxis" + s), top = 1 - (k * (PANEL_PX + PANEL_GAP_PX)) / plot;
      layout["xaxis" + s] = {...layout["xaxis" + s], domain: [0, 1]};
      layout["yaxis" + s] = {...layout["yaxis" + s], domain: [top - PANEL_PX / plot, top]};
      const title = [...titles].find((note) => note.x >= left && note.x <= right);
      if (!title) return;
      Object.assign(title, {x: 0.5, y: top, xanchor: "center", yanchor: "bottom", font: {size: 12}});
      titles.delete(title);
    });
    layout.height = plot + layout.margin.t + layout.margin.b;
    // a legend at the side would take the panels' width
    layout.legend = {...layout.legend, ...LEGEND_BELOW};
  };
  // A legend along the figure's foot (``figures.LEGEND_BELOW``) takes rows of its own under the plot, more on a phone:
  // the figure grows by them, so that the plot keeps its height (the positional-encoding curves were squashed). Its
  // entries flow in rows (``traceorder`` "normal"; a group of entries would take a block of rows of its own).
  const legendPx = (data, layout, width) => {
    const legend = layout.legend || {};
    if (legend.orientation !== "h" || legend.yref !== "container" || layout.showlegend === false) return 0;
    let rows = 0, x = width;
    for (const trace of data) {
      if (trace.showlegend === false || trace.type === "heatmap" || !trace.name) continue;
      const entry = LEGEND_SYMBOL_PX + String(trace.name).length * LEGEND_CHAR_PX;
      if (x + entry > width - 8) [rows, x] = [rows + 1, entry];
      else x += entry;
    }
    return rows * LEGEND_ROW_PX;
  };
  // Numbers in cells (``figures.cell_text``) are wrapped in a coloured span, which plotly's automatic text size
  // would count as characters: size them here from the cell's width instead, at most plotly's 12 px. The width is
  // read only for such a trace: reading it lays the page out, before plotly's own draw does.
  const fitText = (gd, data, layout) => {
    const margin = layout.margin || {};
    let width;
    data.forEach((trace) => {
      if (trace.type !== "heatmap" || !trace.texttemplate || trace.textfont?.size) return;
      width ??= gd?.clientWidth || window.innerWidth;
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
  const phone = (gd, data, layout) => {
    const width = window.innerWidth;
    if (width > phonePx || !layout) return layout;
    const bar = {orientation: "h", x: 0.5, xanchor: "center", y: 0, yref: "container", yanchor: "bottom",
                  len: 0.9, thickness: 10};
    // A long title is wrapped (``wrapTitle``), in a smaller font. Plotly anchors a title of several lines by its
    // first line and draws the others above it, so each added line moves it down one more line height.
    const text = layout.title?.text && wrapTitle(layout.title.text, width);
    const below = modebarPx + (text ? text.split("<br>").length - 1 : 0) * TITLE_LINE_PX;
    // the title goes under plotly's toolbar (modebar)
    const top = (layout.margin?.t ?? 80) + below;
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
    stackPanels(data, layout);
    const legend = legendPx(data, layout, gd?.clientWidth || width);
    // plotly's default height is 450
    if (legend) layout.height = (layout.height || 450) + legend;
    const cells = smallMultiples(data);
    // small multiples: layer x head subplots, one title each, rearranged in 1 or 2 columns
    if (cells.length > 2) {
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
  // The toolbar's PNG download is named after the figure's box and the sentence it was drawn for
  // ("walk-plot-the-film-was-dull.png"), not plotly's "newplot.png". Plotly's own button reads the name from the config,
  // and a config that differs from the last draw's (a name per sentence) has Plotly.react draw the figure from scratch
  // and then again: a third of an Analyze. So the button is replaced by one that takes the name noted at the figure's
  // last draw, and every draw passes the same config.
  const downloadNames = new WeakMap();
  const noteDownloadName = (gd) => {
    const box = gd.closest(".block[id]")?.id || "figure";
    const sentence = document.querySelector("#sentence textarea")?.value || "";
    const words = sentence.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "-").replace(/^-+|-+$/g, "").slice(0, 40);
    downloadNames.set(gd, words ? `${box}-${words}` : box);
  };
  // Gradio's plotly bundle sets window.Plotly once, before it draws anything
  let plotly;
  Object.defineProperty(window, "Plotly", {
    configurable: true,
    get: () => plotly,
    set: (value) => {
      const react = value.react;
      const downloadButton = {
        name: "downloadPng",
        title: "Download plot as a PNG",
        icon: value.Icons.camera,
        click: (gd) => value.downloadImage(gd, {format: "png", filename: downloadNames.get(gd) || "figure"}),
      };
      const draw = (gd, data, layout, config) => {
        layout = phone(gd, data, layout);
        if (layout) fitText(gd, data, layout);
        noteDownloadName(gd);
        config = {...(config || {}), modeBarButtonsToRemove: ["toImage"], modeBarButtonsToAdd: [downloadButton]};
        return react(gd, data, layout, config);
      };
      // Gradio 6.31 puts every new figure in a plot element of its own, and first hands it to the element that one
      // replaces, which leaves the page in the same update: a draw there is thrown away, and took 40-100 ms of each
      // Analyze. So a figure for an element already drawn is drawn a task later, if that element is still shown.
      value.react = (gd, ...figure) => {
        if (!gd?.classList?.contains("js-plotly-plot")) return draw(gd, ...figure);
        return new Promise((resolve) => setTimeout(resolve)).then(() => (gd.isConnected ? draw(gd, ...figure) : gd));
      };
      plotly = value;
    },
  });
})();
