"""The rest of jax.nn's names and parameters: ``where=`` masks of softmax, log_softmax,
logsumexp, logmeanexp and standardize, standardize's ``algorithm``, identity, tanh and
one_hot's default dtype, each against a numpy formula, under jit and vmap, and the
masked functions' gradients against central differences."""
import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import nn

X = np.array([[-3.7, -1.3, -0.4, 0.2], [0.55, 1.2, 2.9, -0.07]])
W = np.array([[True, False, True, True], [False, True, True, False]])


def _np_lse(x, w, axis=-1, keepdims=False):
    m = np.max(np.where(w, x, -np.inf), axis=axis, keepdims=True)
    s = np.sum(np.where(w, np.exp(x - m), 0), axis=axis, keepdims=True)
    out = np.log(s) + m
    return out if keepdims else np.squeeze(out, axis)


CASES = [
    ("softmax_where", lambda x: nn.softmax(x, where=W),
     lambda x: np.where(W, np.exp(x - _np_lse(x, W, keepdims=True)), 0)),
    ("softmax_where_axis0", lambda x: nn.softmax(x, axis=0, where=W | W[::-1]),
     lambda x: np.where(W | W[::-1], np.exp(x - _np_lse(x, W | W[::-1], 0, True)), 0)),
    ("log_softmax_where", lambda x: nn.log_softmax(x, where=W),
     lambda x: np.where(W, x - _np_lse(x, W, keepdims=True), -np.inf)),
    ("logsumexp_where", lambda x: nn.logsumexp(x, axis=1, where=W),
     lambda x: _np_lse(x, W)),
    ("logmeanexp", lambda x: nn.logmeanexp(x, axis=1),
     lambda x: np.log(np.mean(np.exp(x), axis=1))),
    ("logmeanexp_where_keepdims", lambda x: nn.logmeanexp(x, axis=1, where=W, keepdims=True),
     lambda x: _np_lse(x, W, keepdims=True) - np.log(W.sum(1, keepdims=True))),
    ("logmeanexp_all", nn.logmeanexp, lambda x: np.log(np.mean(np.exp(x)))),
    ("standardize_fast", nn.standardize,
     lambda x: (x - x.mean(-1, keepdims=True)) / np.sqrt(
         np.maximum((x * x).mean(-1, keepdims=True) - x.mean(-1, keepdims=True) ** 2, 0)
         + 1e-5)),
    ("standardize_stable", lambda x: nn.standardize(x, algorithm="stable"),
     lambda x: (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)),
    ("standardize_where", lambda x: nn.standardize(x, where=W, algorithm="stable"),
     lambda x: (x - np.mean(x, -1, keepdims=True, where=W)) / np.sqrt(
         np.var(x, -1, keepdims=True, where=W) + 1e-5)),
    ("identity", nn.identity, lambda x: x),
    ("tanh", nn.tanh, np.tanh),
]


@pytest.mark.parametrize("name,f,ref", CASES, ids=[c[0] for c in CASES])
def test_value_jit_vmap(name, f, ref):
    want = ref(X)
    for got in (f(X), ft.jit(f)(X)):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)
    if name in ("softmax_where", "log_softmax_where", "standardize_fast",
                "standardize_stable", "identity", "tanh"):    # row-wise functions
        row = {"softmax_where": lambda r, w: nn.softmax(r, where=w),
               "log_softmax_where": lambda r, w: nn.log_softmax(r, where=w)}.get(name)
        got = (ft.vmap(row)(X, W) if row else ft.vmap(f)(X))
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name,f,ref", CASES, ids=[c[0] for c in CASES])
def test_gradient_matches_central_differences(name, f, ref):
    weights = np.cos(np.arange(X.size) + 1.0).reshape(X.shape)

    def loss(x):
        y = f(x)
        w = weights if np.ndim(y) == 2 else weights[:, :1] if np.shape(y) == (2, 1) \
            else weights[:, 0] if np.ndim(y) == 1 else 1.0
        return fnp.sum(fnp.where(fnp.isfinite(y), y, 0.0) * w)
    g = np.asarray(ft.grad(loss)(X))
    fd = np.zeros_like(X)
    for j in np.ndindex(X.shape):
        hi, lo = X.copy(), X.copy()
        hi[j] += 1e-6
        lo[j] -= 1e-6
        fd[j] = (float(loss(hi)) - float(loss(lo))) / 2e-6
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-7)


def test_masked_entries_get_no_gradient():
    g = np.asarray(ft.grad(lambda x: fnp.sum(nn.softmax(x, where=W) ** 2))(X))
    assert np.all(g[~W] == 0)


def test_one_hot_default_dtype_and_bad_algorithm():
    assert nn.one_hot(np.array([0, 1]), 2).dtype == np.float64
    assert nn.one_hot(np.array([0, 1]), 2, dtype=np.float32).dtype == np.float32
    with pytest.raises(ValueError, match="algorithm"):
        nn.standardize(X, algorithm="exact")


def _init_cases():
    import ast
    import os
    src = open(os.path.join(os.path.dirname(__file__), "data", "make_jax_nn_reference.py")).read()
    node = next(n for n in ast.parse(src).body if isinstance(n, ast.Assign)
                and getattr(n.targets[0], "id", "") == "INIT_CASES")
    return ast.literal_eval(node.value)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", sorted(_init_cases()))
def test_initializer_equals_jax_draw(name, dtype):
    """Stored JAX draws (tests/data/jax_nn_reference.npz): same key, same values."""
    import os
    from functrans import random
    from functrans.nn import initializers
    ref = np.load(os.path.join(os.path.dirname(__file__), "data", "jax_nn_reference.npz"))
    fac, args, shape = _init_cases()[name]
    got = getattr(initializers, fac)(*args, dtype=np.dtype(dtype))(random.PRNGKey(3), shape)
    want = ref[f"{name}_{dtype}"]
    assert got.dtype == want.dtype and got.shape == want.shape
    tol = 1e-6 if dtype == "float32" else 1e-13
    np.testing.assert_allclose(np.asarray(got), want, rtol=tol, atol=tol)


def test_attention_residual_is_logsumexp_of_logits():
    """return_residual gives (out, logsumexp of the scaled logits) in BTN order, as JAX."""
    rng = np.random.default_rng(0)
    q, k = rng.standard_normal((2, 3, 4, 5)), rng.standard_normal((2, 6, 4, 5))
    out, res = nn.dot_product_attention(q, k, k, return_residual=True)
    np.testing.assert_allclose(out, nn.dot_product_attention(q, k, k), rtol=1e-14)
    logits = np.einsum("btnh,bsnh->bnts", q, k) / np.sqrt(5)
    m = logits.max(-1, keepdims=True)
    want = (np.log(np.exp(logits - m).sum(-1)) + m[..., 0]).transpose(0, 2, 1)
    np.testing.assert_allclose(res, want, rtol=1e-13)
    out1, res1 = nn.dot_product_attention(q[0], k[0], k[0], return_residual=True)
    np.testing.assert_allclose(res1, want[0], rtol=1e-13)


# rows with +-inf and nan; the values and gradients jax.nn / jax.scipy.special 0.10.2 give
# (x64) for them: a +inf entry makes a softmax row NaN (inf - inf), as JAX and scipy have it
_I, _N = np.inf, np.nan
_SPECIAL_ROWS = np.array([[1., _I], [-_I, -_I], [_I, _I], [_I, -_I], [1., _N], [-_I, 1.]])
_SPECIAL_WANT = {
    "softmax": [[_N, _N], [_N, _N], [_N, _N], [_N, _N], [_N, _N], [0.0, 1.0]],
    "log_softmax": [[_N, _N], [_N, _N], [_N, _N], [_N, _N], [_N, _N], [-_I, 0.0]],
    "softmax_where": [[1.0, 0.0], [_N, 0.0], [_N, 0.0], [_N, 0.0], [1.0, 0.0], [_N, 0.0]],
    "log_softmax_where": [[0.0, -_I], [_N, -_I], [_N, -_I], [_N, -_I], [0.0, -_I],
                          [_N, -_I]],
    "logsumexp": [_I, -_I, _I, _I, _N, 1.0],
    "logsumexp_where": [1.0, -_I, _I, _I, 1.0, -_I],
    "logsumexp_b0": [_I, -_I, _I, -_I, _N, 1.0],
    "softmax_grad": [[_N, _N], [_N, _N], [_N, _N], [_N, _N], [_N, _N], [0.0, 0.0]],
    "log_softmax_grad": [[_N, _N], [_N, _N], [_N, _N], [_N, _N], [_N, _N], [1.0, -1.0]],
    "logsumexp_grad": [[0.0, _N], [_N, _N], [_N, _N], [_N, 0.0], [_N, _N], [0.0, 1.0]],
    "logsumexp_where_grad": [[1.0, 0.0], [_N, 0.0], [_N, 0.0], [_N, 0.0], [1.0, 0.0],
                             [_N, 0.0]],
}


def _special_case(name):
    from functrans.scipy import special
    wm, wt = np.array([True, False]), np.array([1.0, 2.0])
    rows = {
        "softmax": special.softmax, "log_softmax": special.log_softmax,
        "softmax_where": lambda r: nn.softmax(r, where=wm),
        "log_softmax_where": lambda r: nn.log_softmax(r, where=wm),
        "logsumexp": special.logsumexp,
        "logsumexp_where": lambda r: special.logsumexp(r, where=wm),
        "logsumexp_b0": lambda r: special.logsumexp(r, b=np.array([0.0, 1.0])),
        "softmax_grad": ft.grad(lambda r: fnp.sum(nn.softmax(r) * wt)),
        "log_softmax_grad": ft.grad(lambda r: fnp.sum(nn.log_softmax(r) * wt)),
        "logsumexp_grad": ft.grad(nn.logsumexp),
        "logsumexp_where_grad": ft.grad(lambda r: nn.logsumexp(r, where=wm)),
    }
    return rows[name]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")   # inf - inf, on purpose
@pytest.mark.parametrize("name", sorted(_SPECIAL_WANT))
def test_softmax_logsumexp_special_values_are_jaxs(name):
    """softmax([1, inf]) is [nan, nan] (it was [0, nan]); logsumexp's b == 0 drops an
    entry even when it is infinite; where= masks give JAX's 0 / -inf outside; eager, jit
    and vmap alike."""
    f, want = _special_case(name), np.array(_SPECIAL_WANT[name])
    rows = [np.asarray(f(r)) for r in _SPECIAL_ROWS]
    np.testing.assert_array_equal(np.array(rows), want, err_msg="eager")
    np.testing.assert_array_equal(np.asarray(ft.jit(ft.vmap(f))(_SPECIAL_ROWS)), want,
                                  err_msg="jit(vmap)")
