"""The app's resident memory at real size: a random DistilBERT-base checkpoint (``real_size.write_checkpoint``, no
download) served with ``MODEL_ID``, every endpoint called at 128 and then 512 tokens, and the process's memory read
after each length. Target (issue 37): at most 1.5 GB resident with the model loaded and used.

The app runs in a process of its own, as the Space does: ``import app`` builds the page on the model, then every
endpoint is called as the API calls it (``api.endpoints``, its defaults, and for ``/attention``, ``/attention_norms``
and ``/knockout`` layer 1's head 1, since a big model's layer at 512 tokens is over their 8 MB), with ``JOB_SECONDS`` at
600 so that no job is stopped early and each holds all it would. No data folder is given (the head atlas and the
error list, over an hour of corpus passes at this size, answer how to make them; the behaviour suite runs), and
the cache folder is a temporary one. The HTTP server itself is not started. Printed:
VmRSS (resident now) and VmHWM (the most resident at any time) after loading, and after each length. Example::

    HF_HUB_OFFLINE=1 nice -n 10 python -m benchmarks.real_size_memory
"""

import functools
import inspect
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LENGTHS = (128, 512)
ONE_HEAD = {"layer": 1, "head": 1}  # every head of a big model at 512 tokens is over 8 MB, a layer too
CHOSEN = {"attention": ONE_HEAD, "attention_norms": ONE_HEAD, "knockout": ONE_HEAD}


def memory_mb() -> dict[str, float]:
    """This process's VmRSS and VmHWM, in MB (Linux)."""
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    return {name: int(fields[name].split()[0]) / 1024 for name in ("VmRSS", "VmHWM")}


def serve_and_call(folder: str) -> None:
    """In the app's process: build the page on ``folder``'s model, call every endpoint at each length, print one
    JSON line per stage."""
    os.environ |= {"MODEL_ID": folder, "JOB_SECONDS": "600", "GRADIO_ANALYTICS_ENABLED": "False"}
    sys.path.insert(0, str(ROOT))
    import app  # builds the page on MODEL_ID's model, as the Space does
    from transformer.explorer import runner
    from transformer.explorer.page import api

    from .real_size import text_of

    tokenizer = runner.get_model()[0].tokenizer
    print(json.dumps({"stage": "loaded", **memory_mb()}), flush=True)
    for tokens in LENGTHS:
        text, other = text_of(tokenizer, tokens), text_of(tokenizer, tokens).replace("good", "bad", 1)
        failed, start = {}, time.perf_counter()
        for name, fn in api.endpoints(app.REGISTRY).items():
            named = inspect.signature(fn).parameters
            texts = {"text": text, "text_a": text, "text_b": other}
            arguments = {key: value for key, value in texts.items() if key in named} | CHOSEN.get(name, {})
            try:
                fn(**arguments)
            except Exception as error:  # a refusal still ran what it ran: say which, keep going
                failed[name] = f"{type(error).__name__}: {str(error)[:80]}"
        seconds = round(time.perf_counter() - start)
        print(
            json.dumps({"stage": f"{tokens} tokens", "seconds": seconds, **memory_mb(), "failed": failed}), flush=True
        )


def stage_line(stage: dict) -> str:
    """One row of the table from one of ``serve_and_call``'s JSON lines."""
    refused = ", ".join(f"{name} ({said})" for name, said in stage.get("failed", {}).items()) or "none"
    seconds = str(stage.get("seconds", ""))
    return f"{stage['stage']:<12} {stage['VmRSS']:9.0f} {stage['VmHWM']:9.0f} {seconds:>8}  {refused}"


def run(show=print) -> list[str]:
    """Build the checkpoint, run ``serve_and_call`` in a fresh process, ``show`` each stage's row as it comes (a run at
    512 tokens takes tens of minutes), and return the table."""
    from .real_size import write_checkpoint

    lines = [
        "DistilBERT-base shapes, the app's process: every endpoint at each length, then its memory (MB = 2^20 bytes)",
        f"{'after':<12} {'VmRSS MB':>9} {'VmHWM MB':>9} {'calls s':>8}  refused",
    ]
    for line in lines:
        show(line)
    peak = 0.0
    with tempfile.TemporaryDirectory() as folder:
        write_checkpoint(Path(folder), "distilbert")
        empty = Path(folder) / "no-data"
        env = os.environ | {"HF_HUB_OFFLINE": "1", "SENTIMENT_DATA_DIR": str(empty), "ATTENTION_EXPLORER_CACHE": folder}
        code = f"from benchmarks.real_size_memory import serve_and_call; serve_and_call({folder!r})"
        with subprocess.Popen(
            [sys.executable, "-c", code],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        ) as child:
            for line in child.stdout:
                if line.startswith("{"):
                    stage = json.loads(line)
                    peak = max(peak, stage["VmHWM"])
                    lines.append(stage_line(stage))
                    show(lines[-1])
        if child.returncode:
            raise RuntimeError(f"the app's process failed ({child.returncode})")
    lines.append(f"peak resident {peak:.0f} MB: target <= 1536 MB (1.5 GiB): {'met' if peak <= 1536 else 'MISSED'}")
    show(lines[-1])
    return lines


if __name__ == "__main__":
    run(functools.partial(print, flush=True))
