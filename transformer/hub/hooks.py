"""Forward hooks that live for one call: head knockout, position embeddings off, and capturing a module's output.

Shape letters: B = batch, N = tokens, H = heads, d_k = D // H.

``transformers`` 5 has no ``head_mask`` argument and no switch for the position embeddings, so the adapter
adds these hooks around one forward and removes them after it (``added``): no state stays on the modules
between calls. A hook acts only in the thread that added it, so a call running in another thread at the same
time (the explorer serves several at once) runs the model unchanged.
"""

import contextlib
import functools
import threading
from collections.abc import Callable, Iterator, Sequence

import torch
from torch import nn

# (module, hook, kind): kind "pre" is a forward pre-hook, "post" a forward hook.
HookSpec = tuple[nn.Module, Callable, str]


def head_mask_hook(layer_mask: torch.Tensor, num_heads: int) -> Callable:
    """A forward pre-hook for a layer's W_o that multiplies each head's slice of the context by its mask value.

    Args:
        layer_mask: this layer's mask, 1 keeps a head and 0 knocks it out; one row for the batch or one per row.
        num_heads: H.

    Shape:
        layer_mask: (H,) or (B, H); W_o's input: (B, N, H·d_k), the heads' contexts side by side.
    """

    def hook(module: nn.Module, args: tuple) -> tuple:
        context, *rest = args  # (B, N, H·d_k)
        b, n, width = context.shape
        heads = context.reshape(b, n, num_heads, width // num_heads)  # (B, N, H, d_k)
        scale = layer_mask.to(context.dtype).reshape(-1, 1, num_heads, 1)  # (B or 1, 1, H, 1)
        return ((heads * scale).reshape(b, n, width), *rest)

    return hook


def zero_output_hook(module: nn.Module, args: tuple, output: torch.Tensor) -> torch.Tensor:
    """A forward hook that replaces a module's output by zeros: position embeddings that add nothing."""
    return torch.zeros_like(output)


def capture_hook(store: list) -> Callable:
    """A forward hook that appends the module's output to ``store``."""

    def hook(module: nn.Module, args: tuple, output: torch.Tensor) -> None:
        store.append(output)

    return hook


def _this_thread_only(hook: Callable) -> Callable:
    """``hook``, acting only in the thread that wraps it; elsewhere it leaves the module's input and output alone."""
    owner = threading.get_ident()

    @functools.wraps(hook)
    def guarded(*args):
        return hook(*args) if threading.get_ident() == owner else None

    return guarded


@contextlib.contextmanager
def added(specs: Sequence[HookSpec]) -> Iterator[None]:
    """Register every hook of ``specs`` for the block inside, and remove them all when it ends, error or not."""
    handles = []
    try:
        for module, hook, kind in specs:
            register = module.register_forward_pre_hook if kind == "pre" else module.register_forward_hook
            handles.append(register(_this_thread_only(hook)))
        yield
    finally:
        for handle in handles:
            handle.remove()
