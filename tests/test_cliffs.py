"""Performance cliffs against JAX (issue 15 item 5), checked by mechanism, never by time:
the algorithm a function uses (counted work), and its values against numpy."""
import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp


def _gathers(jaxpr):
    return sum(e.primitive.name == "gather" for e in jaxpr.jaxpr.eqns)


def test_searchsorted_binary_search_matches_numpy_exhaustively():
    rng = np.random.default_rng(0)
    for n in list(range(0, 34)) + [1023, 1024, 1025]:
        a = np.sort(rng.integers(0, n // 2 + 1, n).astype(float))
        if n > 3 and n % 2:
            a[-2:] = np.nan                      # NaNs sort last
        v = np.concatenate([rng.integers(-1, n // 2 + 3, 40).astype(float),
                            [np.nan, -np.inf, np.inf]])
        for side in ("left", "right"):
            want = np.searchsorted(a, v, side=side)
            for method in (None, "scan_unrolled", "compare_all"):
                got = fnp.searchsorted(a, v, side=side, method=method)
                np.testing.assert_array_equal(got, want, err_msg=f"n={n} {side} {method}")
            if n in (0, 1, 7, 1024):
                jitted = ft.jit(lambda a, v: fnp.searchsorted(a, v, side=side))(a, v)
                np.testing.assert_array_equal(jitted, want)
    ints = np.array([1, 2, 2, 3])
    assert fnp.searchsorted(ints, np.array([[2, 5], [0, 3]])).tolist() == [[1, 4], [0, 3]]
    with pytest.raises(ValueError, match="method"):
        fnp.searchsorted(ints, 2, method="bisect")


def test_searchsorted_is_log_n_gathers_not_all_pairs():
    # all pairs of 1e5 x 1e5 was a 1e10-element comparison (tens of GB); binary search is
    # ceil(log2(n + 1)) gathers of size(v)
    a, v = np.sort(np.random.default_rng(1).standard_normal(100000)), np.linspace(-3, 3, 100000)
    jaxpr = ft.make_jaxpr(fnp.searchsorted)(a, v)
    assert _gathers(jaxpr) == 17
    assert max(np.prod(var.aval.shape) for e in jaxpr.jaxpr.eqns for var in e.outvars) <= 100000
    np.testing.assert_array_equal(fnp.searchsorted(a, v), np.searchsorted(a, v))
    np.testing.assert_allclose(fnp.interp(v, a, np.sin(a)), np.interp(v, a, np.sin(a)),
                               rtol=1e-12, atol=1e-15)


def test_large_eager_special_functions_run_compiled_with_scipy_values():
    import scipy.special as S
    from functrans.scipy import special as sp
    from functrans import eager_jit
    n = eager_jit.EAGER_COMPILE_MIN
    x = np.random.default_rng(2).uniform(0.02, 0.98, n)
    eager_jit._compiled._entries.clear()
    got = sp.ndtri(x)
    assert len(eager_jit._compiled) == 1              # it ran through the cached jit
    np.testing.assert_allclose(got, S.ndtri(x), rtol=1e-14, atol=1e-15)
    np.testing.assert_array_equal(got, ft.jit(sp.ndtri)(x))
    np.testing.assert_allclose(sp.betainc(2.0 + x, 3.0, x), S.betainc(2.0 + x, 3.0, x), rtol=1e-12)
    assert len(eager_jit._compiled) == 2
    sp.ndtri(x[:100])                                  # small: eager, no compile
    ft.jit(ft.grad(lambda t: sp.ndtri(t).sum()))(x)    # abstract tracers: no eager path
    assert len(eager_jit._compiled) == 2


def test_eager_derivatives_of_large_library_functions_run_compiled():
    # eager grad of erfc on 1M values interpreted ~300 numpy passes (0.66 s, JAX 0.03 s):
    # the function is now one pjit under grad/jvp/vjp, whose rules run compiled calls
    from functrans import eager_jit, nn
    from functrans.scipy import special as sp
    n = eager_jit.EAGER_COMPILE_MIN
    x = np.random.default_rng(5).uniform(-3, 3, n)
    for f in (sp.erfc, sp.i0e, lambda t: nn.gelu(t, approximate=False), nn.softplus):
        eager_jit._compiled._entries.clear()
        g = ft.grad(lambda t: fnp.sum(f(t)))(x)
        assert len(eager_jit._compiled) == 1
        np.testing.assert_allclose(g, ft.jit(ft.grad(lambda t: fnp.sum(f(t))))(x), rtol=1e-12, atol=1e-15)
        small = ft.grad(lambda t: fnp.sum(f(t)))(x[:64])      # eager, not compiled
        np.testing.assert_allclose(g[:64], small, rtol=1e-12, atol=1e-15)
        y, t = ft.jvp(f, (x,), (np.ones(n),))
        np.testing.assert_allclose(t, g, rtol=1e-12, atol=1e-15)
        np.testing.assert_array_equal(y, ft.jit(f)(x))
        y2, pull = ft.vjp(f, x)
        np.testing.assert_array_equal(y2, y)
        np.testing.assert_allclose(pull(fnp.ones_like(x))[0], g, rtol=1e-12, atol=1e-15)


def test_linearize_jaxpr_keeps_constant_broadcasts_out_of_the_linear_trace():
    # linearize_jaxpr's linear trace is the outermost one: a broadcast of a literal
    # recorded there made the primal output a tracer of it
    from jaxpr_ir import parse
    from functrans.transforms.partial_eval import linearize_jaxpr
    j = parse("{ lambda ; x:f64[3]. let c:f64[3] = broadcast_in_dim[broadcast_dimensions=() "
              "shape=(3,)] 2.0:f64[]\n y:f64[3] = mul x c\n z:f64[3] = add y c in (z,) }")
    outs, lin = linearize_jaxpr(j, [], [np.ones(3)], [True])
    assert not isinstance(outs[0], ft.tracing.Tracer)
    np.testing.assert_array_equal(outs[0], [4.0, 4.0, 4.0])
    np.testing.assert_array_equal(lin(np.ones(3))[0], [2.0, 2.0, 2.0])


def test_grad_of_jit_keeps_constant_broadcasts_as_equations():
    # the jitted body's broadcasts of literals (a polynomial's coefficients) were folded
    # into full-size constants by the JVP split: 113 arrays of x's size passed (and copied)
    # at each call of erfc's compiled derivative
    from functrans.scipy import special as sp
    x = np.linspace(-2, 2, 1000)
    f = ft.jit(lambda t: sp.erfc(t) + fnp.full_like(t, 2.0) * fnp.maximum(t, 0.5))
    jaxpr = ft.make_jaxpr(ft.grad(lambda t: fnp.sum(f(t))))(x)
    assert all(np.size(c) < 1000 for c in jaxpr.consts), [np.shape(c) for c in jaxpr.consts]
    sizes = [v.aval.size for e in jaxpr.jaxpr.eqns for v in e.inputs if hasattr(v, "aval")]
    assert sum(s == 1000 for s in sizes) <= 10, sizes     # was 120: the coefficients
    np.testing.assert_allclose(ft.grad(lambda t: fnp.sum(f(t)))(x),
                               ft.jit(ft.grad(lambda t: fnp.sum(f(t))))(x), rtol=1e-14)


def test_bincount_is_a_scatter_add_not_a_one_hot_sum():
    # the one-hot form built len(x) * length values (1M into 50 bins: 50M); JAX scatters
    x = np.random.default_rng(3).integers(-2, 60, 1000)
    w = np.random.default_rng(4).standard_normal(1000)
    jaxpr = ft.make_jaxpr(lambda x, w: fnp.bincount(x, w, length=50))(x, w)
    assert max(np.prod(var.aval.shape) for e in jaxpr.jaxpr.eqns for var in e.outvars) <= 1000
    assert sum(e.primitive.name == "scatter" for e in jaxpr.jaxpr.eqns) == 1
    want = np.bincount(np.clip(x, 0, None), w, minlength=60)[:50]
    np.testing.assert_allclose(ft.jit(lambda x, w: fnp.bincount(x, w, length=50))(x, w), want,
                               rtol=1e-13, atol=1e-13)
    xs = np.clip(x, 0, None)
    np.testing.assert_array_equal(fnp.bincount(xs), np.bincount(xs))
    np.testing.assert_array_equal(fnp.bincount(xs, minlength=70), np.bincount(xs, minlength=70))
    assert fnp.bincount(xs.astype(np.uint8)).dtype == np.int64
    assert fnp.bincount(xs, w.astype(np.float32)).dtype == np.float32
    g = ft.grad(lambda w: fnp.bincount(xs, w, length=50)[7])(w)
    np.testing.assert_array_equal(g, (xs == 7).astype(float))
    batched = ft.vmap(lambda x: fnp.bincount(x, length=60))(xs.reshape(4, 250))
    np.testing.assert_array_equal(batched.sum(0), np.bincount(xs, minlength=60))
    a = np.random.default_rng(5).standard_normal(3000)
    for got, want in zip(fnp.histogram(a, 17, weights=a), np.histogram(a, 17, weights=a)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_large_eager_searchsorted_runs_compiled():
    from functrans.numpy import _searching
    n = _searching.EAGER_COMPILE_MIN
    rng = np.random.default_rng(6)
    a, v = np.sort(rng.standard_normal(300)), rng.standard_normal(n)
    a[-3:] = np.nan
    _searching._COMPILED.clear()
    fnp.searchsorted(a, v[:100])                        # small: eager, no compile
    assert not _searching._COMPILED
    for side in ("left", "right"):
        np.testing.assert_array_equal(fnp.searchsorted(a, v, side=side),
                                      np.searchsorted(a, v, side=side))
    assert set(_searching._COMPILED) == {"left", "right"}
    x = np.sort(rng.standard_normal(1000))
    np.testing.assert_allclose(fnp.interp(v, x, np.cos(x)), np.interp(v, x, np.cos(x)),
                               rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(fnp.histogram(v, 40)[0], np.histogram(v, 40)[0])


def test_convolve_is_one_convolution_run_as_vector_loops():
    # the windowed matmul gathered an (n + m - 1, m) matrix; with one output channel the
    # backend's GEMMs were matrix-vector products at ~1 ns per product (5x numpy)
    rng = np.random.default_rng(7)
    a, v = rng.standard_normal(300), rng.standard_normal(21)
    names = [e.primitive.name for e in ft.make_jaxpr(fnp.convolve)(a, v).jaxpr.eqns]
    assert names.count("conv_general_dilated") == 1 and "gather" not in names
    compiled = ft.jit(fnp.convolve).lower(a, v).compile()
    assert compiled.cost_analysis()["host steps"] == 0
    assert "ft_cblas" not in compiled.as_text()          # tap loops, no degenerate GEMMs
    for mode in ("full", "same", "valid"):
        for x, y in ((a, v), (v, a), (a.astype(np.float32), v.astype(np.float32))):
            want = np.convolve(x, y, mode)
            tol = 1e-5 if x.dtype == np.float32 else 1e-12
            for got in (fnp.convolve(x, y, mode), ft.jit(fnp.convolve, static_argnums=2)(x, y, mode)):
                assert got.dtype == want.dtype
                np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
            np.testing.assert_allclose(fnp.correlate(x, y, mode), np.correlate(x, y, mode),
                                       rtol=tol, atol=tol)
    np.testing.assert_array_equal(fnp.convolve(np.arange(5), np.arange(3)),
                                  np.convolve(np.arange(5), np.arange(3)))
    c = a + 1j * a[::-1]
    np.testing.assert_allclose(fnp.correlate(c, v + 2j), np.correlate(c, v + 2j), rtol=1e-12)
    g = ft.jit(ft.grad(lambda a, v: (fnp.convolve(a, v) ** 2).sum(), argnums=(0, 1)))(a, v)
    full = np.convolve(a, v)
    np.testing.assert_allclose(g[0], 2 * np.correlate(full, v, "valid"), rtol=1e-10)
    np.testing.assert_allclose(g[1], 2 * np.correlate(full, a, "valid"), rtol=1e-10)


def test_conv_with_one_output_channel_matches_interpreter():
    # the backend's tap loops: dilation, padding that crops, groups, 2-d, float32
    rng = np.random.default_rng(8)
    from functrans import lax
    for xs, ws, kw in [((2, 1, 40), (1, 1, 9), dict(padding=[(3, -2)], rhs_dilation=(3,))),
                       ((3, 4, 9, 8), (2, 2, 3, 2), dict(padding="SAME", feature_group_count=2)),
                       ((2, 3, 7, 7), (1, 3, 3, 3), dict(padding=[(1, 0), (2, 2)])),
                       ((2, 3, 7, 6), (2, 3, 3, 2), dict(padding=[(2, 2), (1, 2)], lhs_dilation=(2, 1))),
                       ((4, 3, 7, 7), (2, 3, 3, 3), dict(padding=[(1, 1), (2, 0)], batch_group_count=2)),
                       ((3, 1, 30), (1, 1, 4), dict(padding=[(3, 3)], lhs_dilation=(3,)))]:
        for dt in (np.float64, np.float32):
            x, w = rng.standard_normal(xs).astype(dt), rng.standard_normal(ws).astype(dt)
            f = lambda x, w: lax.conv_general_dilated(x, w, (1,) * (len(xs) - 2), **kw)
            with ft.disable_jit():
                want = np.asarray(f(x, w))
            tol = 1e-5 if dt == np.float32 else 1e-12
            np.testing.assert_allclose(ft.jit(f)(x, w), want, rtol=tol, atol=tol)


def test_nonzero_with_size_is_linear_not_a_sort():
    # a stable argsort of the mask was O(n log n) (1M: 56 ms, JAX 13); JAX's form is two
    # cumsums and a scatter-add of size entries
    rng = np.random.default_rng(9)
    x = rng.standard_normal(3000)
    f = lambda a: fnp.nonzero(a > 0.5, size=40, fill_value=-1)[0]
    names = [e.primitive.name for e in ft.make_jaxpr(f)(x).jaxpr.eqns]
    assert "sort" not in names and names.count("scatter") == 1
    for a in (x, x[:50], x[:0], -np.abs(x[:20]), np.abs(x[:60]) + 1):
        for size, fill in ((40, -1), (3, None), (100, None)):
            want = np.flatnonzero(a > 0.5)[:size]
            want = np.concatenate([want, np.full(size - len(want), 0 if fill is None else fill)])
            g = lambda a: fnp.nonzero(a > 0.5, size=size, fill_value=fill)[0]
            np.testing.assert_array_equal(g(a), want)
            np.testing.assert_array_equal(ft.jit(g)(a), want)
    m = rng.standard_normal((30, 20)) > 1
    for got, want in zip(ft.jit(lambda m: fnp.nonzero(m, size=200))(m), np.nonzero(m)):
        np.testing.assert_array_equal(got[:len(want)], want)
        assert not np.asarray(got[len(want):]).any()
    np.testing.assert_array_equal(ft.vmap(lambda r: fnp.flatnonzero(r, size=25, fill_value=-2))(m),
                                  [np.pad(np.flatnonzero(r), (0, 25 - r.sum()), constant_values=-2)
                                   for r in m])
    g = ft.grad(lambda v: fnp.extract(m.ravel(), v, size=7).sum())(np.arange(600.0))
    np.testing.assert_array_equal(np.flatnonzero(g), np.flatnonzero(m)[:7])


def test_pad_modes_are_slices_not_a_gather():
    # a gather of the whole padded array was 4x JAX under jit; JAX pads with slices
    rng = np.random.default_rng(10)
    x = rng.standard_normal((6, 7))
    for mode in ("edge", "reflect", "symmetric", "wrap"):
        for widths in (((2, 1), (0, 6)), 3, ((13, 0), (1, 1))):      # wider than the axis too
            f = lambda a: fnp.pad(a, widths, mode=mode)
            names = [e.primitive.name for e in ft.make_jaxpr(f)(x).jaxpr.eqns]
            assert "gather" not in names, (mode, widths)
            np.testing.assert_array_equal(ft.jit(f)(x), np.pad(x, widths, mode))
        w = np.arange(np.pad(x, 2, mode).size, dtype=float).reshape(np.pad(x, 2, mode).shape)
        g = ft.grad(lambda a: (fnp.pad(a, 2, mode=mode) * w).sum())(x)
        want = np.zeros(x.size)
        np.add.at(want, np.pad(np.arange(x.size).reshape(x.shape), 2, mode).ravel(), w.ravel())
        np.testing.assert_allclose(g.ravel(), want)
    many = ft.make_jaxpr(lambda a: fnp.pad(a, 40, mode="reflect"))(np.ones(3))   # 40+ runs
    assert [e.primitive.name for e in many.jaxpr.eqns].count("gather") == 1
    np.testing.assert_array_equal(ft.jit(lambda a: fnp.pad(a, 40, mode="reflect"))(np.arange(3.0)),
                                  np.pad(np.arange(3.0), 40, "reflect"))


def test_vander_is_numpys_running_product():
    # a power per column was 10x numpy eagerly, 3x JAX compiled; numpy multiplies
    x = np.array([np.nan, np.inf, -0.0, 2.0, -1.5, 1e-3])
    names = [e.primitive.name for e in ft.make_jaxpr(lambda x: fnp.vander(x, 6))(x).jaxpr.eqns]
    assert names.count("mul") == 4 and "integer_pow" not in names and "pow" not in names
    for v in (x, np.arange(5), np.array([1 + 2j, -1j])):
        for n in (None, 0, 1, 2, 6):
            for inc in (False, True):
                want = np.vander(v, n, inc)
                for got in (fnp.vander(v, n, inc), ft.jit(lambda v: fnp.vander(v, n, inc))(v)):
                    assert got.dtype == want.dtype
                    np.testing.assert_array_equal(got, want)      # bit for bit, NaN/inf too
    g = ft.grad(lambda v: fnp.vander(v, 4).sum())(np.array([2.0, -1.0]))
    np.testing.assert_allclose(g, [3 * 4 + 2 * 2 + 1, 3 - 2 + 1])


def test_einsum_of_three_operands_follows_a_contraction_path():
    # left to right, 'ij,jk,k->i' multiplied the two matrices (n**3 products) where two
    # matrix-vector products do (n**2); JAX takes opt_einsum's path, here numpy's greedy one
    rng = np.random.default_rng(11)
    a, b, v = rng.standard_normal((60, 50)), rng.standard_normal((50, 40)), rng.standard_normal(40)
    f = lambda a, b, v: fnp.einsum("ij,jk,k->i", a, b, v)
    outs = [e.outvars[0].aval.shape for e in ft.make_jaxpr(f)(a, b, v).jaxpr.eqns
            if e.primitive.name == "dot_general"]
    assert outs == [(50,), (60,)]
    for spec, shapes in [("ij,jk,k->i", [(6, 5), (5, 4), (4,)]),
                         ("ab,bc,cd,de->ae", [(2, 9), (9, 9), (9, 9), (9, 2)]),
                         ("bij,bjk,bkl->bil", [(3, 4, 5), (3, 5, 6), (3, 6, 2)]),
                         ("ii,ij,jk->k", [(4, 4), (4, 5), (5, 3)]), ("a,b,c->abc", [(2,), (3,), (4,)]),
                         ("...ij,jk,k->...i", [(2, 3, 4, 5), (5, 6), (6,)]), ("i,i,i", [(7,)] * 3)]:
        ops = [rng.standard_normal(s) for s in shapes]
        want = np.einsum(spec, *ops)
        np.testing.assert_allclose(fnp.einsum(spec, *ops), want, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(ft.jit(lambda *o: fnp.einsum(spec, *o))(*ops), want,
                                   rtol=1e-12, atol=1e-12)
    g = ft.grad(lambda b: f(a, b, v).sum())(b)
    np.testing.assert_allclose(g, np.outer(a.sum(0), v), rtol=1e-12)


def test_isin_of_many_pairs_is_a_binary_search():
    # all pairs of 1e5 elements in 1000 tests was 73 ms eagerly (numpy 0.6)
    rng = np.random.default_rng(12)
    e, t = rng.integers(0, 3000, 5000), rng.integers(0, 3000, 400)     # 2e6 pairs
    names = [q.primitive.name for q in ft.make_jaxpr(fnp.isin)(e, t).jaxpr.eqns]
    assert "sort" in names and "reduce_or" not in names
    assert max(np.prod(v.aval.shape) for q in ft.make_jaxpr(fnp.isin)(e, t).jaxpr.eqns
               for v in q.outvars) <= 5000
    for x, y in ((e, t), (np.array([np.nan, -0.0, 0.0, 1.5, np.inf, -np.inf, 3]),
                          np.array([0.0, np.nan, np.inf, 3, -np.inf])),
                 (e.astype(np.float32)[:50], t[:30]), (np.arange(10), np.array([2.0, 3.5, 7.0])),
                 (np.arange(4), np.array([], int)), (e.reshape(50, 100), t)):
        for method in ("auto", "compare_all", "binary_search", "sort"):
            for invert in (False, True):
                want = np.isin(x, y, invert=invert)
                f = lambda x, y: fnp.isin(x, y, invert=invert, method=method)
                np.testing.assert_array_equal(f(x, y), want)
                if method in ("compare_all", "binary_search") and not invert:
                    np.testing.assert_array_equal(ft.jit(f)(x, y), want)
    with pytest.raises(ValueError, match="method"):
        fnp.isin(e, t, method="hash")


def test_large_eager_polyval_runs_compiled():
    from functrans import eager_jit
    x = np.random.default_rng(13).standard_normal(eager_jit.EAGER_COMPILE_MIN)
    p = np.array([0.5, -1.0, 2.0, 3.0])
    eager_jit._compiled._entries.clear()
    np.testing.assert_allclose(fnp.polyval(p, x[:100]), np.polyval(p, x[:100]), rtol=1e-14)
    assert not eager_jit._compiled                         # small: eager
    np.testing.assert_allclose(fnp.polyval(p, x), np.polyval(p, x), rtol=1e-13, atol=1e-14)
    assert len(eager_jit._compiled) == 1
    assert fnp.polyval(p.astype(np.float32), x.astype(np.float32)).dtype == np.float32
    g = ft.grad(lambda x: fnp.polyval(p, x).sum())(x[:5])           # small: no compile
    np.testing.assert_allclose(g, np.polyval(np.polyder(p), x[:5]), rtol=1e-12, atol=1e-15)
    g = ft.grad(lambda x: fnp.polyval(p, x).sum())(x)               # large: compiled
    np.testing.assert_allclose(g, np.polyval(np.polyder(p), x), rtol=1e-12, atol=1e-14)
    assert len(eager_jit._compiled) == 1


def test_eager_products_set_the_blas_to_the_free_cores(monkeypatch):
    # OpenBLAS's threads fighting other processes for a loaded machine's cores cost an
    # eager 3-operand einsum of 256x256 matrices 15x its CPU time; compiled programs
    # already set the BLAS's count to the free cores before each call
    from backends.llvm import blas, threads
    from functrans.primitives.dot import dot_general
    if not blas.available():
        pytest.skip("no BLAS found")
    seen = []
    monkeypatch.setattr(threads, "BLAS_SETTERS", [seen.append])
    monkeypatch.setattr(threads, "pool_started", lambda: False)
    monkeypatch.setattr(threads, "free_cores", lambda ours: 1)
    a = np.ones((64, 64))
    for product, want in ((lambda: fnp.matmul(a, a), a @ a),
                          (lambda: fnp.einsum("ij,jk,kl->il", a, a, a), a @ a @ a),
                          (lambda: fnp.tensordot(a, a), 4096.0),
                          (lambda: dot_general(a, a, (((1,), (0,)), ((), ()))), a @ a)):
        monkeypatch.setattr(blas, "_EAGER_CHECKED", [-1e9])
        seen.clear()
        np.testing.assert_allclose(product(), want)
        assert seen and seen[-1] == 1
