"""``dot_product_attention`` as jax.nn has it, computed straightforwardly (one einsum for
the logits, a masked softmax, one einsum for the output; no flash/tiling).

>>> import functrans.numpy as fnp
>>> from functrans import nn
>>> q = fnp.ones((1, 2, 1, 4))
>>> nn.dot_product_attention(q, q, q, is_causal=True).shape
(1, 2, 1, 4)
"""
from __future__ import annotations

import math

import numpy as np

from .. import numpy as fnp
from ..typing import Array, ArrayLike

__all__ = ["dot_product_attention"]


def _softmax_last(x):
    m = fnp.max(x, axis=-1, keepdims=True)
    e = fnp.exp(x - m)
    return e / fnp.sum(e, axis=-1, keepdims=True)


def _combined_mask(mask, is_causal, T, S, q_lens, kv_lens, local_window_size, batch):
    """A boolean (B, 1, 1, T, S)-broadcastable mask (True = attend), or None."""
    out = None

    def both(m):
        return m if out is None else fnp.logical_and(out, m)
    if mask is not None:
        m = fnp.asarray(mask)
        if m.dtype != np.bool_:
            raise TypeError(f"dot_product_attention: mask must be boolean, got {m.dtype}")
        out = both(m)
    qi = np.arange(T)[:, None]
    kj = np.arange(S)[None, :]
    if is_causal:
        out = both(fnp.asarray(kj <= qi))
    if local_window_size is not None:
        left, right = (local_window_size, local_window_size) \
            if isinstance(local_window_size, int) else local_window_size
        out = both(fnp.asarray((kj >= qi - left) & (kj <= qi + right)))
    if kv_lens is not None:
        kv = fnp.asarray(kv_lens).reshape(batch, 1, 1, 1)
        out = both(fnp.asarray(kj) < kv)
    if q_lens is not None:
        ql = fnp.asarray(q_lens).reshape(batch, 1, 1, 1)
        out = both(fnp.asarray(qi) < ql)
    return out


def dot_product_attention(query: ArrayLike, key: ArrayLike, value: ArrayLike,
                          bias: ArrayLike | None = None, mask: ArrayLike | None = None, *,
                          scale: float | None = None, is_causal: bool = False,
                          query_seq_lengths: ArrayLike | None = None,
                          key_value_seq_lengths: ArrayLike | None = None,
                          local_window_size: int | tuple[int, int] | None = None,
                          implementation: str | None = None,
                          return_residual: bool = False) -> Array | tuple[Array, Array]:
    """``softmax(q k^T * scale + bias, masked) v`` over shapes ``(B, T, N, H)`` for the
    query and ``(B, S, K, H)`` for key and value (``N`` a multiple of ``K``: grouped-query
    attention); the batch axis may be absent. ``bias`` and ``mask`` broadcast to
    ``(B, N, T, S)``; ``mask`` is True where attention is allowed. Masked logits become
    the dtype's most negative finite value, so a fully masked row averages uniformly, as
    in JAX; query positions past ``query_seq_lengths`` output 0 (JAX's padding). ``implementation`` may be None or 'xla' (the computation here). With
    ``return_residual`` also the logsumexp of each query's logits, shape ``(B, T, N)``
    (FlashAttention-2's residual, as JAX returns it).

    >>> import functrans.numpy as fnp
    >>> from functrans import nn
    >>> q = fnp.asarray([[[1.0]], [[2.0]]])      # (T=2, N=1, H=1)
    >>> nn.dot_product_attention(q, q, q, is_causal=True)[:, 0, 0].round(4).tolist()
    [1.0, 1.8808]
    """
    if implementation not in (None, "xla"):
        raise ValueError(f"dot_product_attention: implementation {implementation!r} is not "
                         f"available here (only the straightforward one, None or 'xla')")
    query, key, value = fnp.asarray(query), fnp.asarray(key), fnp.asarray(value)
    unbatched = query.ndim == 3
    if unbatched:
        query, key, value = query[None], key[None], value[None]
    if query.ndim != 4 or key.ndim != 4 or value.ndim != 4:
        raise ValueError(f"dot_product_attention: expected rank-3 or rank-4 inputs, got "
                         f"{query.shape}, {key.shape}, {value.shape}")
    B, T, N, H = query.shape
    _, S, K, _ = key.shape
    if key.shape != value.shape[:3] + (H,) or value.shape[:3] != (B, S, K) or N % K:
        raise ValueError(f"dot_product_attention: shapes do not fit: query {query.shape}, "
                         f"key {key.shape}, value {value.shape}")
    G = N // K
    scale = 1.0 / math.sqrt(H) if scale is None else scale
    q = query.reshape(B, T, K, G, H)
    # 16-bit floats: logits and softmax in float32, the probabilities rounded to the value
    # dtype, as JAX (its f16/bf16 softmax is float32; in float16 it halves the error here)
    wide = np.float32 if fnp.finfo(query.dtype).bits == 16 else None
    logits = fnp.einsum("btkgh,bskh->bkgts", q, key, preferred_element_type=wide)
    logits = (logits * fnp.asarray(scale, logits.dtype)).reshape(B, N, T, S)
    if bias is not None:
        logits = fnp.asarray(logits + fnp.asarray(bias), logits.dtype)
    m = _combined_mask(mask, is_causal, T, S, query_seq_lengths, key_value_seq_lengths,
                       local_window_size, B)
    if m is not None:
        m = fnp.broadcast_to(m, (B, N, T, S))
        lowest = np.finfo(logits.dtype).min
        logits = fnp.where(m, logits, lowest)
    probs = fnp.asarray(_softmax_last(logits), value.dtype).reshape(B, K, G, T, S)
    out = fnp.einsum("bkgts,bskh->btkgh", probs, value).reshape(B, T, N, H)
    if query_seq_lengths is not None:
        # padded query positions output 0, as JAX's (not the uniform average of values)
        keep = np.arange(T)[None, :] < fnp.asarray(query_seq_lengths).reshape(B, 1)
        out = out * fnp.asarray(keep, out.dtype)[:, :, None, None]
    out = out[0] if unbatched else out
    if not return_residual:
        return out
    top = fnp.max(logits, axis=-1, keepdims=True)
    lse = fnp.log(fnp.sum(fnp.exp(logits - top), axis=-1)) + top[..., 0]    # (B, N, T)
    lse = fnp.swapaxes(fnp.asarray(lse, key.dtype), 1, 2)
    return out, (lse[0] if unbatched else lse)
