"""Control flow under vmap: a batched cond/switch index keeps the discarded branch's
NaN out of the gradient, and nested loops batch each body a bounded number of times
(the loop rules' memo of batched bodies)."""
from __future__ import annotations


import numpy as np

import functrans as ft
import functrans.numpy as fnp
from functrans import lax

def test_cond_vmap_batched_predicate_grad_has_no_nan_from_the_other_branch():
    # JAX's testCondGradVmapNan: a lane's discarded branch (sqrt at 0) must not send
    # 0 * inf = NaN back into the gradient; each branch's operands are stop_gradient'ed
    # on the lanes that select another branch
    safe = lambda x: lax.cond(x < 1e-3, lambda x: 1e-3, fnp.sqrt, x)
    x = np.array([0.0, 1.0, 4.0])
    for g in (ft.grad(lambda x: ft.vmap(safe)(x).sum()), ft.vmap(ft.grad(safe))):
        np.testing.assert_array_equal(g(x), [0.0, 0.5, 0.25])
    sw = lambda i, x: lax.switch(i, [fnp.sqrt, lambda x: x, fnp.log], x)
    g = ft.grad(lambda x: ft.vmap(sw)(np.array([1, 0, 2]), x).sum())(np.array([0.0, 4.0, 0.0]))
    np.testing.assert_array_equal(g, [1.0, 0.25, np.inf])


def test_vmap_of_nested_loops_batches_each_body_a_bounded_number_of_times(loop_batchings):
    """scan > scan > while (batched predicate: Newton per lane) > fori_loop under vmap.
    Each loop rule batches its body a few times (fixed point over the batched carries,
    then the final body); the batched bodies of the loops inside are reused, not batched
    anew each time (21 batchings of the innermost body at this depth, 3 more per level,
    before: the odeint of issue #15 took 47 s eagerly)."""
    calls = loop_batchings

    def newton_sqrt(a):
        body = lambda s: (lax.fori_loop(0, 2, lambda i, y: 0.5 * (y + a / y), s[0]),  # noqa: E731
                          s[1] + 1)
        return lax.while_loop(lambda s: fnp.abs(s[0] * s[0] - a) > 1e-12 * a, body, (a, 0))

    def prog(xs):
        def step(c, x):
            y, k = newton_sqrt(x + c)
            return c + 0.1 * y, k
        return lax.scan(lambda c, row: lax.scan(step, c, row), 0.0, fnp.stack([xs, xs + 1.0]))
    xs = np.array([[1.0, 4.0, 9.0], [2.0, 100.0, 0.5]])
    c, k = ft.vmap(prog)(xs)
    for i in range(2):
        ci, ki = prog(xs[i])
        np.testing.assert_allclose(c[i], ci, rtol=1e-14)
        np.testing.assert_array_equal(k[i], ki)
    assert len(set(np.asarray(k).ravel().tolist())) > 1   # lanes stop at different steps
    assert max(calls.values()) <= 3, sorted(calls.values())
