"""JAX's checkpoint policies that answer with ``Recompute``/``Saveable``/``Offloadable``
(functrans has one memory space: an offloaded residual is a saved one), and the
remaining policy names."""
import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.ad_checkpoint import Offloadable, Recompute, Saveable
from functrans.remat import saved_residuals

cp = ft.checkpoint_policies


def _f(x, w):
    h = ft.checkpoint_name(fnp.sin(x @ w), "a")
    return fnp.sum(fnp.cos(ft.checkpoint_name(h @ w, "b")))


def _args():
    rng = np.random.default_rng(0)
    return rng.standard_normal((3, 3)), rng.standard_normal((3, 3))


def _saved_from(pol):
    res = saved_residuals(ft.checkpoint(_f, policy=pol), *_args())
    return sorted(e[3].split(" at ")[0] for e in res.entries)


def test_decisions_read_as_bools():
    assert not Recompute and Saveable and Offloadable("device", "pinned_host")
    assert repr(Recompute) == "Recompute"


def test_offload_policies_save_what_they_offload():
    want = ft.grad(_f, argnums=1)(*_args())
    for pol, saved in [
            (cp.offload_dot_with_no_batch_dims("device", "pinned_host"),
             ["dot_general", "dot_general"]),
            (cp.save_and_offload_only_these_names(
                names_which_can_be_saved=["a"], names_which_can_be_offloaded=["b"],
                offload_src="device", offload_dst="pinned_host"), ["name", "name"]),
            (cp.save_and_offload_only_these_names(
                names_which_can_be_saved=[], names_which_can_be_offloaded=["b"],
                offload_src="device", offload_dst="pinned_host"), ["name"]),
            (cp.checkpoint_dots_with_no_batch_dims, ["dot_general", "dot_general"])]:
        assert [s for s in _saved_from(pol) if not s.startswith("argument")] == saved
        got = ft.jit(ft.grad(ft.checkpoint(_f, policy=pol), argnums=1))(*_args())
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-13)


def test_save_anything_except_these_names_saves_everything_as_jax():
    pol = cp.save_anything_except_these_names("a")
    assert _saved_from(pol) == _saved_from(cp.everything_saveable)


def test_overlapping_names_raise():
    with pytest.raises(ValueError, match="exclusive"):
        cp.save_and_offload_only_these_names(names_which_can_be_saved=["a"],
                                             names_which_can_be_offloaded=["a"],
                                             offload_src="device", offload_dst="pinned_host")
