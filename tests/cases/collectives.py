"""Table rows for the collectives (psum, pmean, pmax, pmin, all_gather, axis_index).

A collective only means something inside ``vmap(..., axis_name=...)``, so each row
wraps one in a named vmap. The driver's own vmap is then an outer, unnamed vmap
around it: that exercises the rules' "the collective belongs to another axis" path.
The primitives themselves never survive into a traced jaxpr (the named vmap
resolves them), so their rules are also tested directly in tests/test_vmap.py."""
from __future__ import annotations

import numpy as np

import functrans as ft
from functrans import lax
from tests.cases import OpCase, gen, randn


def _named(f, in_axes=0, out_axes=0):
    return ft.vmap(f, in_axes=in_axes, out_axes=out_axes, axis_name="i")


CASES = [
    OpCase("coll_psum", _named(lambda r: r * lax.psum(r, "i")), gen(randn(4, 3)),
           ref=lambda x: x * x.sum(0)),
    OpCase("coll_psum_axis1", _named(lambda r: lax.psum(r, "i"), in_axes=1),
           gen(randn(2, 5)), ref=lambda x: np.broadcast_to(x.sum(1), (5, 2))),
    OpCase("coll_psum_unbatched_operand",
           _named(lambda r, c: r + lax.psum(c, "i"), in_axes=(0, None)),
           gen(randn(3, 2), randn(2)), ref=lambda x, c: x + 3 * c),
    OpCase("coll_psum_scalar", _named(lambda r: lax.psum(r, "i")), gen(randn(6)),
           ref=lambda x: np.full(6, x.sum())),
    OpCase("coll_pmean", _named(lambda r: r - lax.pmean(r, "i")), gen(randn(5, 2)),
           ref=lambda x: x - x.mean(0)),
    OpCase("coll_pmax", _named(lambda r: lax.pmax(r, "i") * r), gen(randn(4, 3)),
           ref=lambda x: x.max(0) * x),
    OpCase("coll_pmin", _named(lambda r: lax.pmin(r, "i") + r), gen(randn(4, 3)),
           ref=lambda x: x.min(0) + x),
    OpCase("coll_all_gather", _named(lambda r: lax.all_gather(r, "i") * r), gen(randn(3, 2)),
           ref=lambda x: x[None, :, :] * x[:, None, :]),
    OpCase("coll_all_gather_axis1", _named(lambda r: lax.all_gather(r, "i", axis=1)),
           gen(randn(3, 2)), ref=lambda x: np.broadcast_to(x.T, (3, 2, 3))),
    OpCase("coll_axis_index", _named(lambda r: r * lax.axis_index("i")), gen(randn(4, 2)),
           ref=lambda x: x * np.arange(4)[:, None]),
    OpCase("coll_axis_index_int", _named(lambda r: lax.axis_index("i") + 0 * r,
                                         in_axes=0),
           gen(lambda rng: rng.integers(0, 5, (3,)).astype(np.int32)),
           ref=lambda x: np.arange(3, dtype=np.int32), diff=False),
]
