"""Classifier forward latency, with and without attention capture, against torch's fused encoder.

The reference is ``torch.nn.TransformerEncoder`` at the same sizes (Pre-LN, GELU, batch_first) in
eval mode under ``inference_mode``, where torch takes its fused C++ fast path. It runs the encoder
stack only, so the ratios charge our embedding, pooling and head against us.
"""

import json
from pathlib import Path

import torch
from torch import nn

from transformer import TransformerClassifier

from .timing import measure, median_ms

SHAPES = [(1, 32), (1, 128), (1, 512), (32, 64)]  # (batch, tokens)
MODEL_DIR = Path(__file__).resolve().parent.parent / "assets" / "model"


def model_config() -> dict:
    """The bundled model's sizes when it is there, else the tutorial's defaults."""
    config_file = MODEL_DIR / "config.json"
    config = json.loads(config_file.read_text()) if config_file.exists() else {"vocab_size": 10_000, "num_classes": 2}
    # 512-token inputs need a long enough positional table.
    return config | {"max_len": max(config.get("max_len", 256), 512), "dropout": 0.0}


def run(rounds: int = 30) -> list[str]:
    config = model_config()
    model = TransformerClassifier(**config).eval()
    d_model, heads = model.d_model, model.num_heads
    layer = nn.TransformerEncoderLayer(
        d_model, heads, config.get("d_ff", 512), 0.0, activation="gelu", batch_first=True, norm_first=True
    )
    fused = nn.TransformerEncoder(layer, model.num_layers, enable_nested_tensor=False).eval()
    lines = [
        f"model: d_model={d_model} heads={heads} layers={model.num_layers} d_ff={config.get('d_ff', 512)}; "
        f"torch {torch.__version__}, {torch.get_num_threads()} threads; medians of {rounds} interleaved rounds",
        f"{'batch x tokens':>15} {'capture ms':>11} {'no capture ms':>14} {'fused ms':>9} {'capture/fused':>14} "
        f"{'no capture/fused':>17}",
    ]
    for batch, tokens in SHAPES:
        ids = torch.randint(1, config["vocab_size"], (batch, tokens))
        x = torch.randn(batch, tokens, d_model)
        with torch.inference_mode():
            times = measure(
                {
                    "capture": lambda ids=ids: model(ids, output_attentions=True),
                    "plain": lambda ids=ids: model(ids),
                    "fused": lambda x=x: fused(x),
                },
                rounds=rounds,
            )
        cap, plain, ref = (median_ms(times[k]) for k in ("capture", "plain", "fused"))
        shape = f"{batch} x {tokens}"
        lines.append(f"{shape:>15} {cap:>11.2f} {plain:>14.2f} {ref:>9.2f} {cap / ref:>13.2f}x {plain / ref:>16.2f}x")
    lines.append("targets: no capture <= 1.1x fused, capture <= 1.5x fused")
    return lines


if __name__ == "__main__":
    print("\n".join(run()))
