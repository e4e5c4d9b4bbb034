"""Every benchmark in one report: `make bench`."""

from . import (
    behaviour_tab,
    browser,
    explain_views,
    faithfulness,
    head_atlas,
    hub_model,
    model_forward,
    page_config,
    patching,
    real_size,
    real_size_page,
    routes,
    training,
)

SECTIONS = [
    ("The page before the first click: its first HTML and configuration, plain and gzipped", page_config.run),
    ("Model forward vs torch.nn.TransformerEncoder (fused fast path)", model_forward.run),
    ("Main handler, figures, payloads and explanation views", explain_views.run),
    ("Faithfulness by erasure: /faithfulness at 128 tokens", faithfulness.run),
    ("Browser, app against the floor app: Analyze, head change, cold deep link", browser.run),
    ("Head atlas: compute on the reference corpus, load once written", head_atlas.run),
    ("Behaviour tab against the Errors tab: cold deep link, handler; the suite's run", behaviour_tab.run),
    ("A Hub BERT of the bundled model's size against the bundled model: the main handler's work", hub_model.run),
    ("Activation patching on the bundled model at 25 tokens: the grid, the Patching tab, the readout", patching.run),
    ("Routes: the graph on the bundled model at 25 tokens and on DistilBERT-base shapes at 128", routes.run),
    ("Real size: DistilBERT-base and BERT-base shapes, every endpoint against the bare model's passes", real_size.run),
    ("Real size in Chromium: the page on DistilBERT-base shapes against the bundled model", real_size_page.run),
    ("Training tab: the bundled model's checkpoints, 12 at its size, run at 25 tokens; the slider", training.run),
]


def main() -> None:
    for title, run in SECTIONS:
        print(f"\n## {title}")
        print("\n".join(run()), flush=True)


if __name__ == "__main__":
    main()
