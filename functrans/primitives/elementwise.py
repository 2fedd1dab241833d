"""Elementwise primitives. Operands of one equation share one shape and dtype
(``functrans.numpy`` inserts broadcasts and conversions first), which keeps every
rule here free of broadcasting logic.

Unary ops are rows of ``UNARY_TABLE``: name, numpy function, accepted dtype
kinds, and the derivative as a function of (x, out) built from primitives.

>>> import numpy as np
>>> float(sin(np.float64(0.0)))
0.0
"""
from __future__ import annotations

import numpy as np

from jaxpr_ir import ShapedArray
from .base import (Primitive, Zero, aval, batch_elementwise, defjvp, deflinear,
                   instantiate, is_undefined)

__all__ = ["add", "sub", "mul", "div", "neg", "sin", "cos", "exp", "log",
           "convert_element_type", "select_n"]

_KIND_NAMES = {"f": "floating", "c": "complex", "i": "signed integer",
               "u": "unsigned integer", "b": "bool"}


def _elementwise_aval(name, kinds, out_dtype=None):
    """Shape rule: operands share shape and dtype; dtype kind is one of ``kinds``."""
    def rule(*avals, **params):
        a0 = avals[0]
        for i, a in enumerate(avals[1:], 1):
            if a.shape != a0.shape or a.dtype != a0.dtype:
                raise TypeError(
                    f"{name}: operands must have the same shape and dtype, got "
                    f"{a0.str_short()} (operand 0) and {a.str_short()} (operand {i})")
        if a0.dtype.kind not in kinds:
            ok = ", ".join(_KIND_NAMES[k] for k in kinds)
            raise TypeError(f"{name}: dtype {a0.dtype} is not supported (needs {ok})")
        weak = all(a.weak_type for a in avals)
        return ShapedArray(a0.shape, out_dtype or a0.dtype, weak if out_dtype is None else False)
    return rule


def _np_impl(fn, dtype_fix=True):
    """Run a numpy function, keeping the input dtype (numpy returns scalars for 0-d)."""
    def impl(*xs, **params):
        with np.errstate(all="ignore"):
            out = fn(*xs)
        dt = np.result_type(*xs) if dtype_fix else None
        return np.asarray(out, dtype=dt) if dt is not None else np.asarray(out)
    return impl


# --------------------------------------------------------------------------- binary

add_p = Primitive("add")
add_p.def_rules(abstract_eval=_elementwise_aval("add", "fciub"), impl=_np_impl(np.add))
sub_p = Primitive("sub")
sub_p.def_rules(abstract_eval=_elementwise_aval("sub", "fciu"), impl=_np_impl(np.subtract))
mul_p = Primitive("mul")
mul_p.def_rules(abstract_eval=_elementwise_aval("mul", "fciub"), impl=_np_impl(np.multiply))
div_p = Primitive("div")


def _div_impl(x, y):
    # floats: true division; integers: floor division with x // 0 == 0 (defined, as numpy)
    with np.errstate(all="ignore"):
        if np.result_type(x, y).kind in "iu":
            return np.asarray(np.floor_divide(x, y), dtype=np.result_type(x, y))
        return np.asarray(np.true_divide(x, y), dtype=np.result_type(x, y))


div_p.def_rules(abstract_eval=_elementwise_aval("div", "fciu"), impl=_div_impl)


def _unbroadcast_ct(ct, x):
    return ct


def _transpose_add(ct, x, y):
    return [ct if is_undefined(x) else None, ct if is_undefined(y) else None]


def _transpose_sub(ct, x, y):
    nct = Zero(ct.aval) if type(ct) is Zero else neg(ct)
    return [ct if is_undefined(x) else None, nct if is_undefined(y) else None]


deflinear(add_p, _transpose_add)
deflinear(sub_p, _transpose_sub)
for _p in (add_p, sub_p, mul_p, div_p):
    batch_elementwise(_p)

defjvp(mul_p, lambda t, x, y, out: mul(t, y), lambda t, x, y, out: mul(x, t))


def _transpose_mul(ct, x, y):
    # mul is linear in whichever operand is the tangent; the other is a residual
    if type(ct) is Zero:
        return [Zero(x.aval) if is_undefined(x) else None, Zero(y.aval) if is_undefined(y) else None]
    if is_undefined(x) and is_undefined(y):
        raise TypeError("mul: cannot transpose a product of two linear values")
    if is_undefined(x):
        return [mul(ct, y), None]
    return [None, mul(x, ct)]


mul_p.transpose = _transpose_mul

defjvp(div_p,
       lambda t, x, y, out: div(t, y),
       lambda t, x, y, out: neg(mul(t, div(out, y))))


def _transpose_div(ct, x, y):
    if is_undefined(y):
        raise TypeError("div: cannot transpose with respect to the denominator")
    return [Zero(x.aval) if type(ct) is Zero else div(ct, y), None]


div_p.transpose = _transpose_div


# --------------------------------------------------------------------------- unary table

def _unary(name, np_fn, kinds, deriv):
    """Define one unary primitive from a table row."""
    p = Primitive(name)
    p.def_rules(abstract_eval=_elementwise_aval(name, kinds), impl=_np_impl(np_fn))
    batch_elementwise(p)
    if deriv is None:
        p.not_differentiable = True
    else:
        defjvp(p, lambda t, x, out, **params: mul(t, deriv(x, out)))
    return p


neg_p = Primitive("neg")
neg_p.def_rules(abstract_eval=_elementwise_aval("neg", "fciu"), impl=_np_impl(np.negative))
deflinear(neg_p, lambda ct, x: [Zero(x.aval) if type(ct) is Zero else neg(ct)])
batch_elementwise(neg_p)

# name, numpy function, dtype kinds, derivative d(out)/dx as a function of (x, out)
UNARY_TABLE = [
    ("sin", np.sin, "fc", lambda x, out: cos(x)),
    ("cos", np.cos, "fc", lambda x, out: neg(sin(x))),
    ("exp", np.exp, "fc", lambda x, out: out),
    ("log", np.log, "fc", lambda x, out: div(_ones_like(x), x)),
]

UNARY = {row[0]: _unary(*row) for row in UNARY_TABLE}
sin_p, cos_p, exp_p, log_p = (UNARY[n] for n in ("sin", "cos", "exp", "log"))


def _ones_like(x):
    a = aval(x)
    return np.ones(a.shape, a.dtype)


# --------------------------------------------------------------------------- conversion

convert_element_type_p = Primitive("convert_element_type")


def _convert_aval(x, *, new_dtype, weak_type=False):
    return ShapedArray(x.shape, new_dtype, weak_type)


def _convert_impl(x, *, new_dtype, weak_type=False):
    with np.errstate(all="ignore"):
        return np.asarray(x).astype(new_dtype)


def _convert_jvp(primals, tangents, *, new_dtype, weak_type=False):
    (x,), (t,) = primals, tangents
    out = convert_element_type(x, new_dtype, weak_type)
    src = aval(x).dtype
    if type(t) is Zero or new_dtype.kind not in "fc" or src.kind not in "fc":
        return out, Zero(ShapedArray(aval(out).shape, new_dtype, weak_type))
    return out, convert_element_type(t, new_dtype, weak_type)


def _convert_transpose(ct, x, *, new_dtype, weak_type=False):
    if type(ct) is Zero:
        return [Zero(x.aval)]
    return [convert_element_type(ct, x.aval.dtype, x.aval.weak_type)]


def _convert_batch(args, dims, **params):
    return convert_element_type_p.bind(args[0], **params), dims[0]


convert_element_type_p.def_rules(abstract_eval=_convert_aval, impl=_convert_impl,
                                 jvp=_convert_jvp, transpose=_convert_transpose,
                                 batch=_convert_batch)


# --------------------------------------------------------------------------- select

select_n_p = Primitive("select_n")


def _select_n_aval(which, *cases):
    if not cases:
        raise TypeError("select_n: needs at least one case")
    c0 = cases[0]
    for i, c in enumerate(cases[1:], 1):
        if c.shape != c0.shape or c.dtype != c0.dtype:
            raise TypeError(f"select_n: cases must have the same shape and dtype, got "
                            f"{c0.str_short()} (case 0) and {c.str_short()} (case {i})")
    if which.shape != c0.shape:
        raise TypeError(f"select_n: predicate shape {which.shape} must equal case shape {c0.shape}")
    if which.dtype.kind not in "bi" or (which.dtype.kind == "b" and len(cases) > 2):
        raise TypeError(f"select_n: predicate must be bool (2 cases) or int32, got {which.dtype}")
    return ShapedArray(c0.shape, c0.dtype, all(c.weak_type for c in cases))


def _select_n_impl(which, *cases):
    if len(cases) == 1:
        return np.asarray(cases[0])
    if np.asarray(which).dtype == np.bool_:
        return np.asarray(np.where(which, cases[1], cases[0]))
    return np.asarray(np.choose(np.clip(which, 0, len(cases) - 1), cases))


def _select_n_jvp(primals, tangents):
    which, *cases = primals
    out = select_n_p.bind(which, *cases)
    ts = tangents[1:]
    if all(type(t) is Zero for t in ts):
        return out, Zero(aval(out))
    ts = [instantiate(t) for t in ts]
    return out, select_n_p.bind(which, *ts)


def _select_n_transpose(ct, which, *cases):
    if is_undefined(which):
        raise TypeError("select_n: the predicate cannot be linear")
    res = [None]
    for i, c in enumerate(cases):
        if not is_undefined(c):
            res.append(None)
        elif type(ct) is Zero:
            res.append(Zero(c.aval))
        else:
            zeros = np.zeros(c.aval.shape, c.aval.dtype)
            branches = [zeros] * len(cases)
            branches[i] = ct
            res.append(select_n_p.bind(which, *branches))
    return res


select_n_p.def_rules(abstract_eval=_select_n_aval, impl=_select_n_impl, jvp=_select_n_jvp,
                     transpose=_select_n_transpose)
batch_elementwise(select_n_p)


# --------------------------------------------------------------------------- lax wrappers

def _as_operand(x, like):
    """Python scalars take the dtype and shape of the other operand (weak typing)."""
    if isinstance(x, (bool, int, float, complex)):
        a = aval(like)
        return np.full(a.shape, x, dtype=a.dtype)
    return x


def _binary(p):
    def f(x, y):
        return p.bind(_as_operand(x, y), _as_operand(y, x))
    f.__name__ = p.name
    f.__doc__ = f"Elementwise ``{p.name}`` of two operands of one shape and dtype."
    return f


add, sub, mul, div = (_binary(p) for p in (add_p, sub_p, mul_p, div_p))


def neg(x):
    return neg_p.bind(x)


def sin(x):
    return sin_p.bind(x)


def cos(x):
    return cos_p.bind(x)


def exp(x):
    return exp_p.bind(x)


def log(x):
    return log_p.bind(x)


def convert_element_type(x, new_dtype, weak_type=False):
    """Cast to ``new_dtype``; a no-op (no equation) when the type already matches."""
    new_dtype = np.dtype(new_dtype)
    a = aval(x)
    if a.dtype == new_dtype and a.weak_type == weak_type:
        return x
    return convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=weak_type)


def select_n(which, *cases):
    """``cases[which]`` elementwise; with a bool predicate, ``(false_case, true_case)``."""
    return select_n_p.bind(which, *cases)
