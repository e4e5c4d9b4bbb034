"""Export an analysis as JSON and an attention matrix as CSV, for download buttons and API endpoints.

Shape letters: N = query tokens, M = key tokens.
"""

import base64
import csv
import dataclasses
import io
import json
import math

import numpy as np
import torch


def to_jsonable(value, decimals: int | None = None):
    """Turn an analysis (dataclasses, dicts, lists, tensors, arrays, numbers) into JSON-ready Python.

    Tensors and arrays become nested lists of Python floats or ints; float32 values survive the
    trip exactly. NaN and ±inf, which strict JSON lacks, become None.

    Args:
        value: the analysis.
        decimals: round every float to this many decimals (for compact API answers); None keeps them exact.
    """
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().numpy()
    if isinstance(value, np.ndarray | np.generic):
        if np.issubdtype(value.dtype, np.floating):
            if decimals is not None:
                # float64 before rounding: a rounded float32 prints as 0.12280000001192093 in JSON
                value = np.round(value.astype(np.float64), decimals)
            finite = np.isfinite(value)
            # whole arrays at once: walking a 128-token pass number by number took most of an answer's time
            if finite.all():
                return value.tolist()
            cells = np.asarray(value).astype(object)
            cells[~finite] = None
            return cells.tolist()
        return to_jsonable(value.tolist())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: to_jsonable(getattr(value, field.name), decimals) for field in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(key): to_jsonable(item, decimals) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(item, decimals) for item in value]
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        return value if decimals is None else round(value, decimals)
    return value


def exact_array(values: np.ndarray) -> dict:
    """``values`` exact and compact: {"dtype": "float32", "shape", "base64": the little-endian float32 bytes in C
    order}, 5.3 bytes a number where a number written out exactly takes 10 to 14. In numpy:
    ``np.frombuffer(base64.b64decode(a["base64"]), "<f4").reshape(a["shape"])``."""
    values = np.ascontiguousarray(values, dtype="<f4")
    return {"dtype": "float32", "shape": list(values.shape), "base64": base64.b64encode(values.tobytes()).decode()}


def exact_array_bytes(values: np.ndarray) -> int:
    """How long ``exact_array(values)``'s base64 text is: 4 characters for every 3 bytes begun."""
    return 4 * -(-values.size * 4 // 3)


def analysis_to_json(analysis, indent: int | None = None) -> str:
    """Serialise an analysis (see ``to_jsonable``) as strict JSON.

    Args:
        analysis: e.g. ``{"sentence": ..., "tokens": ..., "rollout": tensor, "ig": IntegratedGradients}``.
        indent: passed to ``json.dumps``.

    Returns:
        A JSON string (UTF-8 text, not ASCII-escaped).
    """
    return json.dumps(to_jsonable(analysis), indent=indent, ensure_ascii=False, allow_nan=False)


def attention_to_csv(matrix: torch.Tensor, tokens: list[str], key_tokens: list[str] | None = None) -> str:
    """One attention matrix as CSV: a header of key tokens, then one row per query token, each labelled
    "position token" (``positioned``), as the page's axes are.

    Values are written with ``repr`` so they parse back to the same float32 numbers. Every label starts
    with its position, so no cell holding user text starts like a spreadsheet formula (=, +, -, @).

    Args:
        matrix: rows are queries, columns keys.
        tokens: query token strings.
        key_tokens: key token strings when they differ from the queries'.

    Shape:
        matrix: (N, M); tokens: N strings; key_tokens: M strings.

    Returns:
        The CSV text, one header line and N rows.
    """
    key_tokens = tokens if key_tokens is None else key_tokens
    if tuple(matrix.shape) != (len(tokens), len(key_tokens)):
        raise ValueError(f"matrix {tuple(matrix.shape)} does not match {len(tokens)} × {len(key_tokens)} tokens")
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["query \\ key", *positioned(key_tokens)])
    for label, row in zip(positioned(tokens), matrix.tolist(), strict=True):
        writer.writerow([label, *map(repr, row)])
    return buffer.getvalue()


def positioned(tokens: list[str]) -> list[str]:
    """Tokens labelled as the page labels them, "position token" from 0, so a repeated token ("the") stays apart."""
    return [f"{position} {token}" for position, token in enumerate(tokens)]
