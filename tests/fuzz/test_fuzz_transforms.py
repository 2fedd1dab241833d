"""Seeded random programs with control flow and custom derivatives (scan, fori_loop,
while_loop, cond, switch, custom_jvp/custom_vjp, checkpoint policies, stop_gradient,
nested jit with static/donated arguments; generator: transform_programs.py) against JAX
0.10.2's stored values (tests/data/jax_fuzz_transforms_reference.json, made by
make_jax_fuzz_transforms_reference.py): each program eagerly, under jit on the CPU and
interpreter backends, under vmap (negative and None in_axes, a batched trip count) and
jit∘vmap, and its jvp, grad, jit∘grad and hessian (jacfwd for the forward-only ones)."""
from __future__ import annotations

import functools
import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import functrans as ft
import functrans.lax as lax
import functrans.numpy as fnp
from tests.fuzz.transform_programs import leaves, program

DATA = Path(__file__).resolve().parents[1] / "data" / "jax_fuzz_transforms_reference.json"
RECORDS = json.loads(DATA.read_text())
L = SimpleNamespace(np=fnp, lax=lax, jit=ft.jit, custom_jvp=ft.custom_jvp,
                    custom_vjp=ft.custom_vjp, checkpoint=ft.checkpoint,
                    policies=ft.checkpoint_policies, partial=functools.partial,
                    stop_gradient=ft.stop_gradient)
RTOL = {"float64": 1e-9, "float32": 2e-4}


def assert_close(got, want, rtol, what):
    got = [np.asarray(g, np.float64) for g in leaves(got)]
    want = [np.asarray(w, np.float64) for w in want]
    assert len(got) == len(want), (what, len(got), len(want))
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape, (what, i, g.shape, w.shape)
        scale = np.max(np.abs(w[np.isfinite(w)]), initial=1.0)
        np.testing.assert_allclose(g, w, rtol=0, atol=rtol * scale, equal_nan=True,
                                   err_msg=f"{what} leaf {i}")


def setup(rec):
    dt = np.dtype(rec["dtype"])
    ns = {"np": np, "DT": dt.type}
    exec(rec["src"], ns)
    f = ns["f"]
    x, y = np.array(rec["x"], dt).reshape(-1), np.array(rec["y"], dt).reshape(-1)
    return f, x, y, np.int32(rec["k"]), dt


@pytest.mark.parametrize("rec", RECORDS, ids=[f"seed{r['seed']}" for r in RECORDS])
def test_program_agrees_with_jax_in_every_mode(rec):
    p = program(rec["seed"], rec["traced"])
    assert p["src"] == rec["src"], "generator changed: rerun the maker script"
    f, x, y, k, dt = setup(rec)
    rtol = RTOL[rec["dtype"]]
    cots = [np.asarray(c, dt) for c in rec["cots"]]
    part = lambda a, b: leaves(f(L, a, b, k))                                  # noqa: E731
    scalar = lambda a, b: sum(fnp.sum(o * c) for o, c in zip(part(a, b), cots))  # noqa: E731
    call = lambda a, b, c: f(L, a, b, c)                                       # noqa: E731
    assert_close(call(x, y, k), rec["out"], rtol, "eager")
    assert_close(ft.jit(call)(x, y, k), rec["out"], rtol, "jit cpu")
    assert_close(ft.jit(call, backend="interpret")(x, y, k), rec["out"], rtol, "jit interpret")
    ax = rec["axes"]
    bx = np.stack([x, x * dt.type(1.5) - dt.type(0.25)], axis=ax[0])
    by = y if ax[1] is None else np.stack([y, y[::-1]], axis=ax[1])
    bk = k if ax[2] is None else np.array([k, k + 1], np.int32)
    assert_close(ft.vmap(call, in_axes=ax)(bx, by, bk), rec["vmap"], rtol, "vmap")
    assert_close(ft.jit(ft.vmap(call, in_axes=ax))(bx, by, bk), rec["vmap"], rtol, "jit vmap")
    tans = (np.asarray(rec["tx"], dt).reshape(x.shape), np.asarray(rec["ty"], dt).reshape(y.shape))
    assert_close(ft.jvp(part, (x, y), tans)[1], rec["jvp"], 30 * rtol, "jvp")
    if rec["fwd_only"]:
        assert_close(ft.jacfwd(part)(x, y), rec["jacfwd"], 30 * rtol, "jacfwd")
        return
    assert_close(ft.grad(scalar, (0, 1))(x, y), rec["grad"], 30 * rtol, "grad")
    assert_close(ft.jit(ft.grad(scalar, (0, 1)))(x, y), rec["grad"], 30 * rtol, "jit grad")
    assert_close([ft.hessian(scalar)(x, y)], [rec["hessian"]], 300 * rtol, "hessian")
