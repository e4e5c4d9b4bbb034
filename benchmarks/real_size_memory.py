"""The app's resident memory at real size: a random DistilBERT-base checkpoint (``real_size.write_checkpoint``, no
download) served with ``MODEL_ID``, every endpoint called at 128 and then 512 tokens, and each call's own peak.
Target (issue 37): at most 1.5 GB resident with the model loaded and used.

The app runs in a process of its own, as the Space does: ``import app`` builds the page on the model, then every
endpoint is called in turn as the API calls it (``api.endpoints``, its defaults, and for ``/attention``,
``/attention_norms`` and ``/knockout`` layer 1's head 1, since a big model's layer at 512 tokens is over their 8 MB),
with ``JOB_SECONDS`` at 600 (``--job-seconds``; the defaults it scales are at their most from 120 on: 32 steps and
every head at 512 tokens). A job the cap stops shows its peak until then, a lower bound (``/patching``'s varied with
its passes). No data folder is given (the head atlas and the error list, over an hour of corpus passes at this
size, answer how to make them; the behaviour suite runs), and the cache folder is a temporary one. The HTTP server
itself is not started, so its idle sweep never returns freed memory: what stays resident is what the jobs leave.

Before each call the process's peak (VmHWM) is reset to its resident memory (``clear_refs``, Linux); after it, the
peak during the call, the resident memory (VmRSS) and the call's seconds are printed. Example::

    HF_HUB_OFFLINE=1 nice -n 5 python -m benchmarks.real_size_memory --lengths 512 --endpoints attributions,patching
"""

import argparse
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
TARGET_MB = 1536  # 1.5 GiB
ONE_HEAD = {"layer": 1, "head": 1}  # every head of a big model at 512 tokens is over 8 MB, a layer too
CHOSEN = {"attention": ONE_HEAD, "attention_norms": ONE_HEAD, "knockout": ONE_HEAD}


def memory_mb() -> dict[str, float]:
    """This process's VmRSS and VmHWM, in MB (Linux)."""
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    return {name: int(fields[name].split()[0]) / 1024 for name in ("VmRSS", "VmHWM")}


def measured_call(fn, arguments: dict) -> dict:
    """Call ``fn(**arguments)`` with the peak reset first: its seconds, VmRSS after, VmHWM during (MB), and the
    error it raised, if any (a refusal still ran what it ran)."""
    from .real_size import reset_peak

    reset_peak()
    start, failed = time.perf_counter(), None
    try:
        fn(**arguments)
    except Exception as error:
        failed = f"{type(error).__name__}: {str(error)[:80]}"
    return {"seconds": round(time.perf_counter() - start, 1), **memory_mb(), "failed": failed}


def serve_and_call(folder: str, lengths: tuple[int, ...], names: tuple[str, ...] | None, job_seconds: float) -> None:
    """In the app's process: build the page on ``folder``'s model, then call each endpoint (``names``, None for
    all) at each length, each job stopped after ``job_seconds``, printing one JSON line after loading and one after
    each call."""
    os.environ |= {"MODEL_ID": folder, "JOB_SECONDS": str(job_seconds), "GRADIO_ANALYTICS_ENABLED": "False"}
    sys.path.insert(0, str(ROOT))
    import app  # builds the page on MODEL_ID's model, as the Space does
    from transformer.explorer import runner
    from transformer.explorer.page import api

    from .real_size import text_of

    served = api.endpoints(app.REGISTRY)
    unknown = set(names or ()) - set(served)
    if unknown:
        raise SystemExit(f"no such endpoint: {', '.join(sorted(unknown))}; there are {', '.join(served)}")
    tokenizer = runner.get_model()[0].tokenizer
    print(json.dumps({"endpoint": "loaded", **memory_mb()}), flush=True)
    for tokens in lengths:
        text = text_of(tokenizer, tokens)
        texts = {"text": text, "text_a": text, "text_b": text.replace("good", "bad", 1)}
        for name, fn in served.items():
            if names is None or name in names:
                named = inspect.signature(fn).parameters
                arguments = {key: value for key, value in texts.items() if key in named} | CHOSEN.get(name, {})
                print(json.dumps({"endpoint": name, "tokens": tokens, **measured_call(fn, arguments)}), flush=True)


def call_line(call: dict) -> str:
    """One row of the table from one of ``serve_and_call``'s JSON lines."""
    where = f"{call['tokens']:>6}  /{call['endpoint']}" if "tokens" in call else call["endpoint"]
    seconds = f"{call['seconds']:8.1f}" if "seconds" in call else ""
    return f"{where:<28} {call['VmHWM']:8.0f} {call['VmRSS']:8.0f} {seconds:>8}  {call.get('failed') or ''}".rstrip()


def run(lengths: tuple[int, ...] = LENGTHS, names: tuple[str, ...] | None = None, job_seconds: float = 600) -> None:
    """Build the checkpoint, run ``serve_and_call`` in a fresh process and print each call's row as it comes (the
    whole run at 512 tokens takes tens of minutes of CPU), then the highest peak against the target."""
    from .real_size import write_checkpoint

    print("DistilBERT-base shapes, the app's process; each call's peak (VmHWM during it) and resident memory after")
    print(f"{'tokens  endpoint':<28} {'peak MB':>8} {'after MB':>8} {'seconds':>8}  refused (MB = 2^20 bytes)")
    highest = {"VmHWM": 0.0}
    with tempfile.TemporaryDirectory() as folder:
        write_checkpoint(Path(folder), "distilbert")
        empty = Path(folder) / "no-data"
        env = os.environ | {"HF_HUB_OFFLINE": "1", "SENTIMENT_DATA_DIR": str(empty), "ATTENTION_EXPLORER_CACHE": folder}
        command = f"serve_and_call({folder!r}, {lengths}, {names}, {job_seconds})"
        code = f"from benchmarks.real_size_memory import serve_and_call; {command}"
        with subprocess.Popen(
            [sys.executable, "-c", code], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True
        ) as child:
            for line in child.stdout:
                if line.startswith("{"):
                    call = json.loads(line)
                    highest = max(highest, call, key=lambda c: c["VmHWM"])
                    print(call_line(call), flush=True)
        if child.returncode:
            raise RuntimeError(f"the app's process failed ({child.returncode})")
    verdict = "met" if highest["VmHWM"] <= TARGET_MB else "MISSED"
    where = f"/{highest['endpoint']} at {highest['tokens']} tokens" if "tokens" in highest else highest.get("endpoint")
    print(f"highest peak {highest['VmHWM']:.0f} MB ({where}): target <= {TARGET_MB} MB: {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lengths", default="128,512", help="comma-separated token counts, run in this order")
    parser.add_argument("--endpoints", help="comma-separated endpoint names, e.g. attributions,patching (default: all)")
    parser.add_argument("--job-seconds", type=float, default=600, help="each job's cap, JOB_SECONDS (default 600)")
    args = parser.parse_args()
    lengths = tuple(int(n) for n in args.lengths.split(","))
    run(lengths, tuple(args.endpoints.split(",")) if args.endpoints else None, args.job_seconds)


if __name__ == "__main__":
    main()
