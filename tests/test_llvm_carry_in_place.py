"""Loop carries updated in place by the CPU backend (``backends/llvm/control.in_place``):
a body whose new carry is computed by a kernel reading the old carry only at the element
it writes stores it straight into the carry's buffer instead of a temporary copied over
the carry at the end of each step. Bodies that read the old carry elsewhere (shifted,
reversed, transposed, sorted, reduced, passed through, handed to another carry or an
output) must keep the copy: every case is compared bit for bit with the interpreter
and with the copying code path, and the cases that may write in place are checked to."""
import numpy as np
import pytest

import backends.llvm as llvm
import functrans as ft
import functrans.numpy as fnp
from backends.llvm import control
from functrans import lax

_X = np.random.default_rng(3).standard_normal(257)
_M = np.random.default_rng(4).standard_normal((17, 17))

# body: carry -> new carry (one array carry); True where it may be written in place
_BODIES = {
    "affine": (lambda c: c * 0.99 + 1.0, True),
    "roll": (lambda c: fnp.roll(c, 1) * 0.5 + c, False),
    "reverse": (lambda c: c[::-1] * 0.5 + 1.0, False),
    "reverse_after_sort": (lambda c: fnp.sort(c)[::-1] * 0.5, True),   # c dead before it
    "reverse_plus": (lambda c: c[::-1] + c, False),
    "slice_shift": (lambda c: fnp.concatenate([c[1:], c[:1]]) - c, False),
    "cumsum": (lambda c: fnp.cumsum(c) * 1e-3 + c, False),
    "minus_max": (lambda c: c - fnp.max(c) + 0.25, False),
    "sort": (lambda c: fnp.sort(c) * 0.5 + c * 0.1, False),
    "where": (lambda c: fnp.where(c > 0, c * 0.5, -c), True),
}
_MATRIX_BODIES = {
    "transpose_plus": lambda c: c.T * 0.5 + c,
    "transpose": lambda c: c.T + 1.0,
    "matmul": lambda c: c @ c * 0.01 + c,
    "row_broadcast": lambda c: c[0][None, :] * 0.5 + c,
}


def _loops(body):
    return {
        "fori": lambda x: lax.fori_loop(0, 5, lambda i, c: body(c), x),
        "while": lambda x: lax.while_loop(lambda s: s[0] < 5,
                                          lambda s: (s[0] + 1, body(s[1])), (0, x))[1],
        "scan": lambda x: lax.scan(lambda c, xi: (body(c), c * xi), x, fnp.ones(3)),
        "scan_ys_new": lambda x: lax.scan(lambda c, _: (body(c),) * 2, x, None, length=4),
    }


def _compile(f, *args, in_place=True, placed=None):
    closed = ft.make_jaxpr(f)(*args)
    old, find = control.IN_PLACE, control.in_place

    def spy(*a):
        dests = find(*a)
        placed.extend(r.aval.shape for r in dests.values())
        return dests
    control.IN_PLACE = in_place
    if placed is not None:
        control.in_place = spy
    try:
        llvm.clear_caches()
        return llvm.compile(closed)
    finally:
        control.IN_PLACE, control.in_place = old, find
        llvm.clear_caches()


def _check(f, *args, interpret=True):
    """Run ``f`` in place, copying and interpreted; the same bits. Returns whether
    a carry of the first argument's shape was written in place."""
    placed = []
    new, old = _compile(f, *args, placed=placed), _compile(f, *args, in_place=False)
    got, want = new(*args), old(*args)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    if interpret:
        ref = ft.tree_util.tree_leaves(ft.jit(f, backend="interpret")(*args))
        for g, w in zip(got, ref):
            np.testing.assert_array_equal(g, np.asarray(w))
    return np.shape(args[0]) in placed


@pytest.mark.parametrize("loop", ["fori", "while", "scan", "scan_ys_new"])
@pytest.mark.parametrize("name", sorted(_BODIES))
def test_vector_bodies(name, loop):
    body, safe = _BODIES[name]
    exact = name not in ("cumsum", "minus_max")      # reductions: another summation order
    placed = _check(_loops(body)[loop], _X, interpret=exact)
    if safe and not (loop == "scan" and name == "reverse_after_sort"):   # ys reads c
        assert placed, "expected the carry to be written in place"


@pytest.mark.parametrize("name", sorted(_MATRIX_BODIES))
def test_matrix_bodies(name):
    _check(lambda x: lax.fori_loop(0, 4, lambda i, c: _MATRIX_BODIES[name](c), x), _M,
           interpret=name != "matmul")


def test_kernel_writes_carry_before_reading_the_other():
    """(a, b) -> (b*2, a + b*2): one kernel stores b*2 over a, then reads a."""
    f = lambda a, b: lax.fori_loop(0, 3, lambda i, c: (c[1] * 2.0, c[0] + c[1] * 2.0), (a, b))
    assert _check(f, _X, _X[::-1].copy())


def test_swaps_rotations_and_pass_through():
    def rot(i, c):
        a, b, d = c
        return b, d * 1.5, a
    _check(lambda a: lax.fori_loop(0, 4, rot, (a, a + 1.0, a * 2.0)), _X)
    # passed through unchanged, handed to another carry, returned as ys
    _check(lambda a: lax.fori_loop(0, 3, lambda i, c: (c[0], c[0] * 2.0 + c[1]), (a, a)), _X)
    _check(lambda a: lax.fori_loop(0, 3, lambda i, c: (c[0] + 1.0, c[0]), (a, a)), _X)
    _check(lambda a: lax.scan(lambda c, _: (c * 2.0, c), a, None, length=3), _X)
    _check(lambda a: lax.scan(lambda c, _: ((c[0] * 2.0, c[0] * 2.0), c[0] * 2.0), (a, a),
                              None, length=3), _X)


def test_carries_aliased_to_inputs_and_outputs():
    f = lambda a: (a, lax.fori_loop(0, 3, lambda i, c: c * 0.5 + 1.0, a), a * 2.0)
    assert _check(f, _X)
    g = lambda a: (lambda r: (r, r + 1.0))(lax.fori_loop(0, 3, lambda i, c: c * 0.5, a))
    assert _check(g, _X)


def test_nested_loops():
    inner = lambda c: lax.fori_loop(0, 3, lambda j, d: d * 0.75 + c[0], c)
    f = lambda a: lax.fori_loop(0, 3, lambda i, c: inner(c) + 1.0, a)
    assert _check(f, _X)
    g = lambda a: lax.scan(lambda c, x: (lax.fori_loop(0, 2, lambda j, d: fnp.roll(d, 1) + x, c),
                                         c.sum()), a, fnp.arange(3.0))
    _check(g, _X, interpret=False)


def test_large_parallel_kernel_same_as_copying():
    """A heavy kernel over many elements (split over threads) writing in place."""
    x = np.random.default_rng(5).standard_normal(1 << 17)
    f = lambda a: lax.fori_loop(0, 3, lambda i, c: fnp.sin(c) * 0.5 + fnp.exp(-c * c), a)
    assert _check(f, x, interpret=False)


def test_donated_input_read_after_the_output_over_it_is_stored():
    """A kernel writing an output over a donated input (``_plan_aliases``) loads its
    inputs before its stores: (b*2, a + b*2) with a donated stored b*2 over a first and
    then read a (it returned 4 everywhere instead of a + 2)."""
    a, b = np.arange(8.0), np.ones(8)
    f = lambda a, b: (b * 2.0, a + b * 2.0)
    got = ft.jit(f, donate_argnums=(0,))(ft.device_put(a), b)
    np.testing.assert_array_equal(np.asarray(got[1]), a + 2.0)
    np.testing.assert_array_equal(np.asarray(got[0]), b * 2.0)


def test_scan_ys_reading_the_old_carry_are_written_first():
    """ys that are the old carry or a view of it (a trajectory) are copied to their row
    at the start of the step, so the new carry can still be written in place."""
    xs = np.linspace(0.5, 1.0, 4)
    f = lambda a: lax.scan(lambda c, x: (c * x + 1.0, c), a, xs)
    assert _check(f, _X)
    g = lambda a: lax.scan(lambda c, x: (c * x + 1.0, c[0]), a, xs)
    assert _check(g, _X)
    h = lambda a: lax.scan(lambda c, x: ((c[1] * x, c[0] + 1.0), (c[0][::-1], c[1][3:9])),
                           (a, a * 2.0), xs, reverse=True)
    _check(h, _X)
