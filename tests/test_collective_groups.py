"""Collectives with ``axis_index_groups`` (psum, pmean, pmax, pmin, all_gather,
psum_scatter, all_to_all) against JAX 0.10.2's pmap on 4 devices (stored values,
tests/data/jax_collective_groups.npz; they were a TypeError). Over 4 processes:
tests/mpi_programs/groups.py, run by tests/test_distributed.py."""
import numpy as np
import pytest

import functrans as ft
from functrans import lax
from functrans.sharding import Mesh, P
from tests.mpi_programs.groups import DATA, cases, check

WANT = np.load(DATA)
CASES = cases(ft, ft.numpy, lax)


@pytest.mark.parametrize("name", sorted(CASES))
def test_pmap_with_groups_equals_jax(name):
    arg = WANT["xi" if name.endswith("_int") else "x"]
    for jitted in (False, True):
        f = ft.pmap(CASES[name], axis_name="i")
        out = (ft.jit(f) if jitted else f)(arg)
        for k, leaf in enumerate(ft.tree_util.tree_leaves(out)):
            check(leaf, WANT[f"{name}#{k}"], f"{name} leaf {k} (jit={jitted})")


def test_groups_errors_as_jax():
    x = np.arange(8.0).reshape(4, 2)
    pm = lambda f: ft.pmap(f, axis_name="i")(x)   # noqa: E731
    for bad in ([[0, 1]], [[0, 1], [1, 2, 3]], [[0, 1], [2, 5]]):
        with pytest.raises(ValueError, match="cover all indices exactly once"):
            pm(lambda v: lax.psum(v, "i", axis_index_groups=bad))
    uneven = [[0], [1, 2, 3]]
    # a psum of a traced value over groups of different sizes is fine (JAX too) ...
    assert pm(lambda v: lax.psum(v, "i", axis_index_groups=uneven))[:, 0].tolist() == [
        0.0, 12.0, 12.0, 12.0]
    # ... but JAX divides pmean by the first group's size: refused rather than copied
    with pytest.raises(ValueError, match="different sizes"):
        pm(lambda v: lax.pmean(v, "i", axis_index_groups=uneven))
    for f in (lambda v: lax.all_gather(v, "i", axis_index_groups=uneven),
              lambda v: lax.psum_scatter(v, "i", axis_index_groups=uneven)):
        with pytest.raises(ValueError, match="different sizes"):
            pm(f)
    with pytest.raises(ValueError, match="group size 2"):
        pm(lambda v: lax.psum_scatter(v[:1], "i", axis_index_groups=[[0, 1], [2, 3]]))
    with pytest.raises(ValueError, match="single axis name"):
        ft.pmap(ft.pmap(lambda v: lax.psum(v, ("i", "j"), axis_index_groups=[[0]]),
                        axis_name="j"), axis_name="i")(x[:, :1, None])


def test_groups_in_shard_map_refused_when_checked_as_jax():
    m = Mesh((1,), ("i",))
    f = lambda v: lax.psum(v, "i", axis_index_groups=[[0]])   # noqa: E731
    with pytest.raises(NotImplementedError, match="check_vma=True"):
        ft.shard_map(f, m, in_specs=P("i"), out_specs=P("i"))(np.ones(2))
    got = ft.shard_map(f, m, in_specs=P("i"), out_specs=P("i"), check_rep=False)(np.ones(2))
    assert got.tolist() == [1.0, 1.0]
