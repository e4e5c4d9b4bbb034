"""The head atlas: computing it on the bundled model, and loading it once written: ``python -m benchmarks.head_atlas``.

Targets (issue 15): the atlas computes in <= 30 s on this CPU (one torch thread, as ``make artifacts`` runs
it) and loads in <= 50 ms once cached (hashing model.safetensors and reading head_atlas.json). The bundled
model is copied to a temporary folder, so nothing is written into assets/model. Needs the data folder
(``SENTIMENT_DATA_DIR``, default ../shared/data); says so and measures only the load when it is missing.
"""

import shutil
import tempfile
import time
from pathlib import Path

import torch

from transformer.explorer.corpus import data_folder, model_files
from transformer.loading import DEFAULT_MODEL_DIR, load_model

from .timing import measure, median_ms, p95_ms


def run(rounds: int = 20) -> list[str]:
    torch.set_num_threads(1)
    folder = Path(shutil.copytree(DEFAULT_MODEL_DIR, Path(tempfile.mkdtemp()) / "model"))
    loaded = load_model(folder, device="cpu")
    sha = model_files.model_hash(folder)
    data_dir = data_folder.data_dir()
    lines = [
        f"model {DEFAULT_MODEL_DIR.name}: d_model={loaded.model.d_model} layers={loaded.model.num_layers} "
        f"heads={loaded.model.num_heads}; torch {torch.__version__}, 1 thread"
    ]
    if data_folder.has_dev_sets(data_dir):
        rows = data_folder.reference_corpus(data_folder.dev_sets(data_dir))
        start = time.perf_counter()
        atlas = model_files.build_atlas(loaded.model, loaded.tokenizer, rows, sha)
        lines.append(
            f"compute the atlas over {atlas['sentences']} sentences: {time.perf_counter() - start:.1f} s "
            "(target <= 30 s)"
        )
    else:
        lines.append(f"no data folder at {data_dir}: the atlas is not computed; loading a stand-in")
        atlas = {"model_sha256": sha, "heads": []}
    model_files.write_artifact(folder, model_files.ATLAS_FILE, atlas)
    times = measure(
        {"load": lambda: model_files.read_artifact(folder, model_files.ATLAS_FILE, model_files.model_hash(folder))},
        rounds=rounds,
    )["load"]
    lines.append(
        f"load head_atlas.json (hash the weights, read, check): median {median_ms(times):.1f} ms, "
        f"p95 {p95_ms(times):.1f} ms (target <= 50 ms)"
    )
    shutil.rmtree(folder.parent)
    return lines


if __name__ == "__main__":
    print("\n".join(run()))
