"""The Taylor-mode (``jet``) rules, one entry per primitive in ``jet_eval.JET_RULES``.

Coefficients are unscaled (``x(t) = sum_k x_k t^k``); ``u`` is an input's
``[x_0, x_1, ..., x_K]`` and ``v`` the output's. The recurrences are the classical
ones (Griewank and Walther, *Evaluating Derivatives*, ch. 13): for ``v' = c u'``,
``k v_k = sum_{j=1..k} j c_{k-j} u_j``. Linear primitives share one rule (the
primitive applied to each term); bilinear ones (``mul``, ``dot_general``,
``conv_general_dilated``) the Cauchy product; several are compositions of others,
expanded with ``jet_fun`` (JAX's ``def_comp``).

>>> import functrans.experimental.jet_eval as je
>>> import jaxpr_ir
>>> jaxpr_ir.primitives["sin"] in je.JET_RULES
True
"""
from __future__ import annotations

import math
from functools import partial

import numpy as np

import jaxpr_ir
from jaxpr_ir import ClosedJaxpr
from .. import lax
from .. import numpy as fnp
from ..primitives.control_flow_common import hoist
from ..primitives.custom import hoist_many
from ..tracing import Tracer, bind, get_aval, trace_to_jaxpr
from .jet_eval import JET_RULES, jet_eval, jet_fun, zeros_like_value

__all__: list = []

_P = jaxpr_ir.primitives


def _c(x, v):
    """The constant ``v`` with ``x``'s shape and dtype."""
    return lax.full_like(x, v)


def _sum(terms):
    out = terms[0]
    for t in terms[1:]:
        out = lax.add(out, t)
    return out


def _chain(c, u, v):
    """Fill v[1:] from ``v' = c u'`` (c's coefficients up to order K-1)."""
    for k in range(1, len(v)):
        v[k] = lax.div(_sum([lax.mul(_c(u[j], float(j)), lax.mul(c[k - j], u[j]))
                             for j in range(1, k + 1)]), _c(u[0], float(k)))
    return v


def _split(v):
    return v[0], v[1:]


# --------------------------------------------------------------------------- linear

def _linear(prim, positions, primals, series, **params):
    """``prim`` is linear in the operands at ``positions`` (all if None); the others
    (indices, predicates) are taken as they are."""
    out = bind(prim, *primals, **params)
    pos = range(len(primals)) if positions is None else positions
    terms = []
    for k in range(len(series[0])):
        args = list(primals)
        for i in pos:
            args[i] = series[i][k]
        terms.append(bind(prim, *args, **params))
    if prim.multiple_results:
        return out, [list(ts) for ts in zip(*terms)]
    return out, terms


for _n in ("neg", "add", "sub", "convert_element_type", "broadcast_in_dim", "concatenate",
           "pad", "reshape", "squeeze", "rev", "transpose", "slice", "reduce_sum", "cumsum",
           "fft", "real", "imag", "conj", "complex", "name", "optimization_barrier"):
    JET_RULES[_P[_n]] = partial(_linear, _P[_n], None)
JET_RULES[_P["dynamic_slice"]] = partial(_linear, _P["dynamic_slice"], (0,))
JET_RULES[_P["dynamic_update_slice"]] = partial(_linear, _P["dynamic_update_slice"], (0, 1))
JET_RULES[_P["gather"]] = partial(_linear, _P["gather"], (0,))


def _select_n(primals, series):
    return _linear(_P["select_n"], range(1, len(primals)), primals, series)


def _scatter(primals, series, *, mode, **params):
    if mode not in ("add", "set"):     # set and add are linear in (operand, updates)
        raise NotImplementedError(f"jet: scatter with mode={mode!r} has no Taylor-mode rule "
                                  "(only 'add' and 'set')")
    return _linear(_P["scatter"], (0, 2), primals, series, mode=mode, **params)


def _zero(prim, primals, series, **params):
    return bind(prim, *primals, **params), None


JET_RULES[_P["select_n"]] = _select_n
JET_RULES[_P["scatter"]] = _scatter
JET_RULES[_P["stop_gradient"]] = partial(_zero, _P["stop_gradient"])


# --------------------------------------------------------------------------- products

def _bilinear(prim, primals, series, **params):
    u = [primals[0]] + series[0]
    w = [primals[1]] + series[1]
    v = [_sum([bind(prim, u[j], w[k - j], **params) for j in range(k + 1)])
         for k in range(len(u))]
    return _split(v)


for _n in ("mul", "dot_general", "conv_general_dilated"):
    JET_RULES[_P[_n]] = partial(_bilinear, _P[_n])


def _div(primals, series):
    u = [primals[0]] + series[0]
    w = [primals[1]] + series[1]
    v = [None] * len(u)
    for k in range(len(u)):
        acc = u[k] if k == 0 else lax.sub(u[k], _sum([lax.mul(v[j], w[k - j])
                                                      for j in range(k)]))
        v[k] = lax.div(acc, w[0])
    return _split(v)


JET_RULES[_P["div"]] = _div


# --------------------------------------------------------------------------- transcendental

def _exp_series(x0, out0, series):
    """exp's recurrence (v' = v u') with v_0 = ``out0`` as the derivative's base."""
    u = [x0] + series
    v = [out0] + [None] * len(series)
    for k in range(1, len(v)):
        v[k] = lax.div(_sum([lax.mul(_c(x0, float(j)), lax.mul(v[k - j], u[j]))
                             for j in range(1, k + 1)]), _c(x0, float(k)))
    return v


def _exp(primals, series):
    x, = primals
    return _split(_exp_series(x, lax.exp(x), series[0]))


def _expm1(primals, series):
    x, = primals
    e = lax.exp(x)
    v = _exp_series(x, e, series[0])      # the same derivatives, a more exact primal
    return lax.expm1(x), v[1:]


def _log_from(u, out0):
    """log's recurrence (u v' = u'): v_k = (u_k - sum_{j<k} j v_j u_{k-j} / k) / u_0."""
    v = [out0] + [None] * (len(u) - 1)
    for k in range(1, len(v)):
        acc = u[k]
        if k > 1:
            conv = _sum([lax.mul(_c(u[0], float(j)), lax.mul(v[j], u[k - j]))
                         for j in range(1, k)])
            acc = lax.sub(acc, lax.div(conv, _c(u[0], float(k))))
        v[k] = lax.div(acc, u[0])
    return v


def _log(primals, series):
    x, = primals
    return _split(_log_from([x] + series[0], lax.log(x)))


def _log1p(primals, series):
    x, = primals
    return _split(_log_from([lax.add(x, _c(x, 1.0))] + series[0], lax.log1p(x)))


def _sinusoid(sign, fs, which, primals, series):
    """sin/cos (sign -1) and sinh/cosh (sign +1): s' = c u', c' = sign s u'."""
    x, = primals
    u = [x] + series[0]
    s = [fs[0](x)] + [None] * len(series[0])
    c = [fs[1](x)] + [None] * len(series[0])
    for k in range(1, len(s)):
        kk = _c(x, float(k))
        s[k] = lax.div(_sum([lax.mul(_c(x, float(j)), lax.mul(u[j], c[k - j]))
                             for j in range(1, k + 1)]), kk)
        c[k] = lax.mul(_c(x, float(sign)), lax.div(_sum([
            lax.mul(_c(x, float(j)), lax.mul(u[j], s[k - j])) for j in range(1, k + 1)]), kk))
    return _split(s if which == 0 else c)


JET_RULES[_P["exp"]] = _exp
JET_RULES[_P["expm1"]] = _expm1
JET_RULES[_P["log"]] = _log
JET_RULES[_P["log1p"]] = _log1p
JET_RULES[_P["sin"]] = partial(_sinusoid, -1, (lax.sin, lax.cos), 0)
JET_RULES[_P["cos"]] = partial(_sinusoid, -1, (lax.sin, lax.cos), 1)
JET_RULES[_P["sinh"]] = partial(_sinusoid, 1, (lax.sinh, lax.cosh), 0)
JET_RULES[_P["cosh"]] = partial(_sinusoid, 1, (lax.sinh, lax.cosh), 1)


def _logistic_from(u):
    """sigma' = e u' with e = sigma (1 - sigma), e's coefficients by the product rule."""
    x = u[0]
    v = [lax.logistic(x)] + [None] * (len(u) - 1)
    one = _c(x, 1.0)
    e = [lax.mul(v[0], lax.sub(one, v[0]))] + [None] * (len(u) - 1)
    for k in range(1, len(v)):
        v[k] = lax.div(_sum([lax.mul(_c(x, float(j)), lax.mul(e[k - j], u[j]))
                             for j in range(1, k + 1)]), _c(x, float(k)))
        e[k] = lax.sub(lax.mul(lax.sub(one, v[0]), v[k]),
                       _sum([lax.mul(v[j], v[k - j]) for j in range(1, k + 1)]))
    return v


def _logistic(primals, series):
    return _split(_logistic_from([primals[0]] + series[0]))


def _tanh(primals, series):
    # tanh(x) = 2 sigma(2x) - 1
    x, = primals
    two = _c(x, 2.0)
    v = _logistic_from([lax.mul(two, x)] + [lax.mul(two, t) for t in series[0]])
    return lax.tanh(x), [lax.mul(two, t) for t in v[1:]]


JET_RULES[_P["logistic"]] = _logistic
JET_RULES[_P["tanh"]] = _tanh


def _sqrt(primals, series):
    # v^2 = u: v_k = (u_k - sum_{0<j<k} v_j v_{k-j}) / (2 v_0)
    x, = primals
    u = [x] + series[0]
    v = [lax.sqrt(x)] + [None] * len(series[0])
    two_v0 = lax.mul(_c(x, 2.0), v[0])
    for k in range(1, len(v)):
        acc = u[k]
        if k > 1:
            acc = lax.sub(acc, _sum([lax.mul(v[j], v[k - j]) for j in range(1, k)]))
        v[k] = lax.div(acc, two_v0)
    return _split(v)


def _comp(fun, primal_fun=None):
    """The rule of a primitive equal to the composition ``fun`` (JAX's def_comp); the
    primal is ``primal_fun``'s (the primitive itself, more exact) when given."""
    def rule(primals, series, **params):
        outs, ss = jet_fun(lambda *xs: [fun(*xs, **params)], primals, series)
        out = outs[0] if primal_fun is None else primal_fun(*primals, **params)
        return out, ss[0]
    return rule


def _deriv(prim_fun, deriv):
    """The rule of a unary primitive from its derivative's composition (v' = c u')."""
    def rule(primals, series):
        x, = primals
        c0, cs = jet_fun(lambda y: [deriv(y)], [x], [series[0][:-1]]) if len(series[0]) > 1 \
            else ([deriv(x)], [[]])
        u = [x] + series[0]
        v = _chain([c0[0]] + cs[0], u, [prim_fun(x)] + [None] * len(series[0]))
        return _split(v)
    return rule


def _recip(x):
    return lax.div(_c(x, 1.0), x)


JET_RULES[_P["sqrt"]] = _sqrt
JET_RULES[_P["rsqrt"]] = _comp(lambda x: _recip(lax.sqrt(x)), lax.rsqrt)
JET_RULES[_P["square"]] = _comp(lambda x: lax.mul(x, x), lax.square)
JET_RULES[_P["reciprocal"]] = _comp(_recip, lax.reciprocal)
JET_RULES[_P["tan"]] = _comp(lambda x: lax.div(lax.sin(x), lax.cos(x)), lax.tan)
JET_RULES[_P["exp2"]] = _comp(lambda x: lax.exp(lax.mul(x, _c(x, math.log(2.0)))), lax.exp2)
JET_RULES[_P["log2"]] = _comp(lambda x: lax.div(lax.log(x), _c(x, math.log(2.0))), lax.log2)
JET_RULES[_P["log10"]] = _comp(lambda x: lax.div(lax.log(x), _c(x, math.log(10.0))), lax.log10)
JET_RULES[_P["erf"]] = _deriv(lax.erf, lambda x: lax.mul(
    _c(x, 2.0 / math.sqrt(math.pi)), lax.exp(lax.neg(lax.mul(x, x)))))
JET_RULES[_P["erfc"]] = _comp(lambda x: lax.sub(_c(x, 1.0), lax.erf(x)), lax.erfc)
JET_RULES[_P["asinh"]] = _deriv(lax.asinh, lambda x: lax.rsqrt(lax.add(lax.mul(x, x), _c(x, 1.0))))
JET_RULES[_P["acosh"]] = _deriv(lax.acosh, lambda x: lax.rsqrt(lax.sub(lax.mul(x, x), _c(x, 1.0))))
JET_RULES[_P["atanh"]] = _deriv(lax.atanh, lambda x: _recip(lax.sub(_c(x, 1.0), lax.mul(x, x))))
JET_RULES[_P["asin"]] = _deriv(lax.asin, lambda x: lax.rsqrt(lax.sub(_c(x, 1.0), lax.mul(x, x))))
JET_RULES[_P["acos"]] = _deriv(lax.acos, lambda x: lax.neg(lax.rsqrt(
    lax.sub(_c(x, 1.0), lax.mul(x, x)))))
JET_RULES[_P["atan"]] = _deriv(lax.atan, lambda x: _recip(lax.add(_c(x, 1.0), lax.mul(x, x))))
JET_RULES[_P["cbrt"]] = _deriv(lax.cbrt, lambda x: _recip(lax.mul(
    _c(x, 3.0), lax.square(lax.cbrt(x)))))      # cbrt's own rule, one order lower


def _logaddexp(x, y):
    # m + log(exp(x - m) + exp(y - m)) holds for any series m, so the coefficients are
    # right at ties x == y too (max(x, y) + log1p(exp(-|x - y|)) gave the whole first
    # coefficient to one side there: abs'(0) = 1); the primal is the primitive's
    m = lax.max(x, y)
    return lax.add(m, lax.log(lax.add(lax.exp(lax.sub(x, m)), lax.exp(lax.sub(y, m)))))


_LN2 = math.log(2.0)
JET_RULES[_P["logaddexp"]] = _comp(_logaddexp, lax.logaddexp)
JET_RULES[_P["logaddexp2"]] = _comp(
    lambda x, y: lax.div(_logaddexp(lax.mul(x, _c(x, _LN2)), lax.mul(y, _c(y, _LN2))),
                         _c(x, _LN2)), lambda x, y: bind(_P["logaddexp2"], x, y))
JET_RULES[_P["hypot"]] = _comp(lambda x, y: lax.sqrt(lax.add(lax.mul(x, x), lax.mul(y, y))),
                               lambda x, y: bind(_P["hypot"], x, y))
JET_RULES[_P["rem"]] = _comp(lambda x, y: lax.sub(x, lax.mul(y, lax.floor(lax.div(x, y)))),
                             lax.rem)


def _pow(primals, series):
    # x^y = exp(y log x): exp's recurrence on the series of y log x
    x, y = primals
    z0, zs = jet_fun(lambda a, b: [lax.mul(b, lax.log(a))], [x, y], series)
    return _split(_exp_series(z0[0], lax.pow(x, y), zs[0]))


def _pow_by_squaring(x, n):
    if n < 0:
        return _pow_by_squaring(_recip(x), -n)
    if n == 0:
        return _c(x, 1.0)
    if n == 1:
        return x
    half = _pow_by_squaring(lax.mul(x, x), n // 2)
    return half if n % 2 == 0 else lax.mul(x, half)


def _integer_pow(primals, series, *, y):
    x, = primals
    _, ss = jet_fun(lambda a: [_pow_by_squaring(a, y)], [x], series)
    return lax.integer_pow(x, y), ss[0]


def _atan2(primals, series):
    # atan2(x, y) = atan(x / y) up to a constant: v' = c q' with q = x / y, c = 1 / (1 + q^2)
    x, y = primals
    q0, qs = jet_fun(lambda a, b: [lax.div(a, b)], [x, y], series)
    q = [q0[0]] + qs[0]
    c0, cs = jet_fun(lambda a: [_recip(lax.add(_c(a, 1.0), lax.mul(a, a)))], [q[0]],
                     [q[1:-1]]) if len(q) > 2 else ([_recip(lax.add(_c(q[0], 1.0),
                                                                   lax.mul(q[0], q[0])))], [[]])
    v = _chain([c0[0]] + cs[0], q, [lax.atan2(x, y)] + [None] * (len(q) - 1))
    return _split(v)


JET_RULES[_P["pow"]] = _pow
JET_RULES[_P["integer_pow"]] = _integer_pow
JET_RULES[_P["atan2"]] = _atan2


# --------------------------------------------------------------------------- piecewise

def _abs(primals, series):
    x, = primals
    sign = lax.select_n(lax.lt(x, _c(x, 0.0)), _c(x, 1.0), _c(x, -1.0))
    return lax.abs(x), [lax.mul(sign, t) for t in series[0]]


def _minmax(pick, primals, series):
    """max/min: the series of the chosen operand, their mean at a tie (as JAX)."""
    x, y = primals
    first = pick(x, y)
    tie = lax.eq(x, y)
    half = _c(x, 0.5)

    def one(a, b):
        return lax.select_n(tie, lax.select_n(first, b, a), lax.mul(half, lax.add(a, b)))
    out = lax.select_n(first, y, x)
    return out, [one(a, b) for a, b in zip(series[0], series[1])]


def _reduce_choose(reduce, primals, series, *, axes):
    """reduce_max/min: the mean of the series over the positions attaining the extreme."""
    x, = primals
    out = reduce(x, axes)
    keep = tuple(1 if i in axes else d for i, d in enumerate(get_aval(x).shape))
    at = lax.convert_element_type(lax.eq(x, lax.broadcast_in_dim(
        lax.reshape(out, keep), get_aval(x).shape, tuple(range(len(keep))))),
        np.dtype(get_aval(x).dtype))
    count = bind(_P["reduce_sum"], at, axes=axes)
    return out, [lax.div(bind(_P["reduce_sum"], lax.mul(t, at), axes=axes), count)
                 for t in series[0]]


def _cumulative(op, primals, series, *, axis, reverse):
    # as JAX: the parallel prefix scan, whose pieces all have rules
    _, ss = jet_fun(lambda a: [lax.associative_scan(op, a, reverse=reverse, axis=axis)],
                    primals, series)
    return bind(_CUM[op], primals[0], axis=axis, reverse=reverse), ss[0]


_CUM = {lax.mul: _P["cumprod"], lax.max: _P["cummax"], lax.min: _P["cummin"]}

def _copysign(primals, series):
    # |x| with y's sign: d out = |x|' sgn(y) dx, |x|' as abs's (+1 at -0.0); y's is zero a.e.
    x, y = primals
    sign = lax.mul(lax.select_n(lax.lt(x, _c(x, 0.0)), _c(x, 1.0), _c(x, -1.0)),
                   bind(_P["copysign"], _c(x, 1.0), y))
    return bind(_P["copysign"], x, y), [lax.mul(sign, t) for t in series[0]]


JET_RULES[_P["abs"]] = _abs
JET_RULES[_P["copysign"]] = _copysign
JET_RULES[_P["max"]] = partial(_minmax, lax.gt)
JET_RULES[_P["min"]] = partial(_minmax, lax.lt)
JET_RULES[_P["reduce_max"]] = partial(_reduce_choose, lambda x, a: bind(_P["reduce_max"], x,
                                                                          axes=a))
JET_RULES[_P["reduce_min"]] = partial(_reduce_choose, lambda x, a: bind(_P["reduce_min"], x,
                                                                          axes=a))
for _op in _CUM:
    JET_RULES[_CUM[_op]] = partial(_cumulative, _op)
del _n, _op


def _reduce_prod(primals, series, *, axes):
    # the product is the last entry of a cumulative product over the reduced axes
    # flattened to one (as JAX differentiates cumprod: a parallel prefix scan)
    x, = primals
    shape = get_aval(x).shape
    keep = [i for i in range(len(shape)) if i not in axes]
    n = int(np.prod([shape[i] for i in axes], dtype=np.int64))
    out = bind(_P["reduce_prod"], x, axes=axes)
    if n == 0:
        return out, None

    def prod(a):
        a = lax.reshape(lax.transpose(a, tuple(keep) + tuple(axes)),
                        tuple(shape[i] for i in keep) + (n,))
        c = lax.associative_scan(lax.mul, a, axis=len(keep))
        return lax.index_in_dim(c, n - 1, axis=len(keep), keepdims=False)
    _, ss = jet_fun(lambda a: [prod(a)], [x], series)
    return out, ss[0]


def _sort(primals, series, *, dimension, **params):
    # sorting permutes: every operand's terms follow its primal's permutation
    shape = get_aval(primals[0]).shape
    perm_in = lax.broadcasted_iota(np.int64, shape, dimension)
    outs = bind(_P["sort"], *primals, perm_in, dimension=dimension, **params)
    perm = outs[-1]
    return outs[:-1], [[fnp.take_along_axis(t, perm, axis=dimension) for t in ts]
                       for ts in series]


def _cond(primals, series, *, branches):
    # the same cond, each branch replaced by its jet on (operands, flat series)
    index, ops = primals[0], list(primals[1:])
    order = len(series[0])
    flat = [t for ts in series[1:] for t in ts]
    n = len(ops)
    avals = [get_aval(x) for x in ops + flat]

    def jet_branch(br):
        def fun(*xs):
            ss = [list(xs[n + i * order:n + (i + 1) * order]) for i in range(n)]
            outs, souts = jet_eval(br.jaxpr, br.consts, list(xs[:n]), ss, order)
            terms = []
            for o, s in zip(outs, souts):
                terms += [zeros_like_value(o)] * order if s is None else list(s)
            return list(outs) + terms
        j, c, _ = trace_to_jaxpr(fun, avals, name="jet of a cond branch")
        return ClosedJaxpr(j, c)
    bodies, consts = hoist_many([jet_branch(b) for b in branches])
    outs = bind(_P["cond"], index, *consts, *ops, *flat, branches=tuple(bodies))
    m = len(branches[0].out_avals)
    return outs[:m], [list(outs[m + i * order:m + (i + 1) * order]) for i in range(m)]


JET_RULES[_P["reduce_prod"]] = _reduce_prod
JET_RULES[_P["sort"]] = _sort
JET_RULES[_P["cond"]] = _cond


# --------------------------------------------------------------------------- jit

_PJIT_BODIES: dict = {}     # (id(body), order, series types) -> (body, jet body, consts)


def _pjit_body(jaxpr, order, avals, s_avals):
    """The const-free jaxpr of the jet of a jit body on (primals, flat series), cached."""
    key = (id(jaxpr), order, tuple(a.str_short() for a in s_avals))
    hit = _PJIT_BODIES.get(key)
    if hit is not None and hit[0] is jaxpr:
        return hit[1], hit[2]
    n = len(avals)

    def fun(*xs):
        ss = [list(xs[n + i * order:n + (i + 1) * order]) for i in range(n)]
        outs, souts = jet_eval(jaxpr.jaxpr, jaxpr.consts, list(xs[:n]), ss, order)
        flat = []
        for o, s in zip(outs, souts):
            flat += [zeros_like_value(o)] * order if s is None else list(s)
        return list(outs) + flat

    j, c, _ = trace_to_jaxpr(fun, list(avals) + list(s_avals), name="jet of jit")
    body, consts = hoist(ClosedJaxpr(j, c))
    if not any(isinstance(x, Tracer) for x in consts):
        if len(_PJIT_BODIES) > 256:
            _PJIT_BODIES.clear()
        _PJIT_BODIES[key] = (jaxpr, body, consts)
    return body, consts


def _pjit(primals, series, *, jaxpr, name, backend):
    # as JAX: a jit stays one jit, of the jet of its body (compiled when called eagerly)
    order = len(series[0])
    flat = [t for ts in series for t in ts]
    body, consts = _pjit_body(jaxpr, order, [get_aval(p) for p in primals],
                              [get_aval(t) for t in flat])
    outs = bind(_P["pjit"], *consts, *primals, *flat, jaxpr=body, name=f"jet({name})",
                backend=backend)
    m = len(jaxpr.out_avals)
    return outs[:m], [list(outs[m + i * order:m + (i + 1) * order]) for i in range(m)]


JET_RULES[_P["pjit"]] = _pjit
