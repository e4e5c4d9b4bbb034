// Marks on a page's clock for benchmarks/click_timeline.py, added before any of the page's own scripts: the click,
// the queue's join sent and answered, the job's start and end read from the event stream, the explorer's address
// written (history.replaceState), and (`wrapPlotly`, once plotly is loaded) the heatmap's Plotly.react call and
// the end of its promise. Each mark is [name, performance.now()] in `window.__timeline`.
(() => {
  window.__timeline = [];
  const mark = (name) => window.__timeline.push([name, performance.now()]);
  document.addEventListener("click", () => mark("click"), true);
  const fetch = window.fetch;
  window.fetch = (...args) => {
    if (!String(args[0]?.url || args[0]).includes("queue/join")) return fetch(...args);
    mark("join sent");
    return fetch(...args).then((answer) => { mark("join answered"); return answer; });
  };
  const read = ReadableStreamDefaultReader.prototype.read;
  ReadableStreamDefaultReader.prototype.read = function () {  // Gradio reads its event stream through a reader
    return read.call(this).then((chunk) => {
      const value = chunk.value, text = typeof value === "string" ? value
        : value instanceof Uint8Array ? new TextDecoder().decode(value) : "";
      if (text.includes("process_completed")) mark("job's end read");
      else if (text.includes("process_starts")) mark("job's start read");
      return chunk;
    });
  };
  const replaceState = history.replaceState.bind(history);
  history.replaceState = (...args) => { mark("address written"); return replaceState(...args); };
  window.__wrapPlotly = () => {
    const react = window.Plotly.react;
    window.Plotly.react = (gd, ...rest) => {
      const heatmap = gd?.closest?.("#attention-heatmap");
      if (heatmap) mark("Plotly.react called");
      const drawn = react(gd, ...rest);
      if (heatmap) Promise.resolve(drawn).then(() => mark("Plotly.react resolved"));
      return drawn;
    };
  };
})();
