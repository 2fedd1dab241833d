"""pmap over the processes (JAX's multi-process pmap): each process passes its local slice
(mapped size 1) and the named axis spans every process; grad through it. Compared with the
one-process pmap of the stacked slices (vmap with the axis named). Rank 0 prints OK."""
import numpy as np

import functrans as ft
import functrans.numpy as fnp
from functrans import lax

ft.distributed.initialize()
n, me = ft.process_count(), ft.process_index()
r = np.random.default_rng(0)
w = r.normal(size=3)
xs, ys = r.normal(size=(n, 5, 3)), r.normal(size=(n, 5))   # every process: all slices


def loss(w, x, y):
    return fnp.mean((fnp.tanh(x @ w) - y) ** 2)


def step(w, x, y):
    return w - 0.1 * lax.pmean(ft.grad(loss)(w, x, y), "batch")


def body(a):
    perm = [(k, (k + 1) % n) for k in range(n)]
    return (lax.psum(a, "i") * a, lax.all_gather(a, "i"), lax.ppermute(a, "i", perm),
            lax.axis_index("i") + 0 * a[0].astype(int), lax.axis_size("i"))


def expected(f, *args, **kw):
    """The one-process pmap of every process's slice (vmap with the axis named), row `me`."""
    full = ft.vmap(f, **kw)(*args)
    return ft.tree_util.tree_map(lambda v: np.asarray(v)[me:me + 1], full)


def close(a, b):
    for u, v in zip(ft.tree_util.tree_leaves(a), ft.tree_util.tree_leaves(b)):
        np.testing.assert_allclose(np.asarray(u), np.asarray(v), rtol=1e-12, atol=1e-12)


mine = slice(me, me + 1)
got = ft.pmap(step, "batch", in_axes=(None, 0, 0))(w, xs[mine], ys[mine])
close(got, expected(step, w, xs, ys, in_axes=(None, 0, 0), axis_name="batch"))
got = ft.pmap(body, "i")(xs[mine, 0])
close(got, expected(body, xs[:, 0], axis_name="i"))
# keyword arguments are mapped; out_axes=None returns an unvarying value unmapped
got = ft.pmap(lambda a, b: lax.psum(a * b, "i"), "i", out_axes=None)(xs[mine, 0], b=ys[mine, :3])
close(got, (xs[:, 0] * ys[:, :3]).sum(0))
# vmap outside a multi-process pmap maps within each process
got = ft.vmap(ft.pmap(lambda a: a - lax.pmean(a, "i"), "i"), in_axes=1, out_axes=1)(xs[mine, :, 0])
close(got, (xs[:, :, 0] - xs[:, :, 0].mean(0))[mine])
# grad of a pmap: each process's cotangent seeds its slice; collectives transpose over the
# processes; a broadcast argument's cotangent is summed over every device (as in JAX)
def pbody(w, x):
    return fnp.sum(fnp.sin(x * w) * lax.psum(x, "i") + lax.all_gather(x, "i")[0] * w)


got = ft.grad(lambda w, x: ft.pmap(pbody, "i", in_axes=(None, 0))(w, x).sum(), (0, 1))(
    w, xs[mine, 0])
want = ft.grad(lambda w, x: ft.vmap(pbody, (None, 0), axis_name="i")(w, x).sum(), (0, 1))(
    w, xs[:, 0])
close(got, (want[0], want[1][mine]))
for bad, msg in [
        (lambda: ft.pmap(lambda a: a)(xs[:, 0]), "local_device_count() = 1"),
        (lambda: ft.pmap(ft.pmap(lambda a: a))(xs[mine, :1]), "cannot be nested")]:
    try:
        bad()
    except (ValueError, NotImplementedError) as e:
        assert msg in str(e), str(e)
    else:
        raise AssertionError(f"no error: {msg}")
# device_put onto a mesh of every process: the global value stays whole, the sharding is
# checked (divisible) and recorded; shard_map then cuts this process's block
mesh = ft.make_mesh((n,), ("i",), devices=ft.devices())
g = ft.device_put(xs[:, 0], ft.NamedSharding(mesh, ft.P("i")))
assert g.sharding.spec == ft.P("i") and not g.sharding.is_fully_addressable
close(g, xs[:, 0])
close(ft.shard_map(lambda b: b * 2.0, mesh, in_specs=ft.P("i"), out_specs=ft.P("i"))(g),
      2.0 * xs[:, 0])
try:
    ft.device_put(np.ones(n + 1), ft.NamedSharding(mesh, ft.P("i")))
except ValueError as e:
    assert "not divisible by" in str(e), str(e)
else:
    raise AssertionError("no error for an indivisible dimension")
# devices as JAX numbers them over processes: all of them, and this process's own
assert ft.devices() == [ft.Device("cpu", k) for k in range(n)] and ft.device_count() == n
assert ft.local_devices() == [ft.devices()[me]] == [ft.host_device()]
assert ft.local_device_count() == 1 and ft.devices()[me].process_index == me
assert ft.device_put(np.ones(2), ft.local_devices()[0]).devices() == {ft.devices()[me]}
close(ft.pmap(lambda a: a * 2.0, "i", devices=ft.devices())(xs[mine, 0]), 2.0 * xs[mine, 0])
try:
    ft.device_put(np.ones(2), ft.devices()[(me + 1) % n])
except ValueError as e:
    assert "belongs to process" in str(e), str(e)
else:
    raise AssertionError("no error for another process's device")
# an integer output: its cotangent is float0 (no data), which a shard_map does not take
# (jit of such a pmap raised TypeError once custom_vjp rules got float0 cotangents)
two = ft.pmap(lambda a: (a * a, a.astype(np.int32)), "i")
close(ft.grad(lambda a: fnp.sum(two(a)[0]))(xs[mine, 0]), 2 * xs[mine, 0])
close(ft.jit(two)(xs[mine, 0])[1], xs[mine, 0].astype(np.int32))
# jit's stages: lower / compile / trace of the multi-process pmap run the same program
g = ft.pmap(lambda a: a - lax.pmean(a, "i"), "i")
lo = g.lower(xs[mine, 0])
exe = lo.compile()
close(exe(xs[mine, 0]), g(xs[mine, 0]))
close(exe(xs[mine, 0]), xs[mine, 0] - xs[:, 0].mean(0))
assert "shard_map" in lo.as_text() and "psum" in str(g.trace(xs[mine, 0]).jaxpr), lo.as_text()
calls = exe.cost_analysis()["collectives"]
assert sum(c["calls"] for c in calls.values()) == 1, calls
if me == 0:
    print("OK")
