"""Tests of jaxpr_ir's parser, type checker and passes, on primitives of their own
(``irt_*``: a cond with sub-jaxprs, a call, an effectful print) so as not to depend on
functrans. A tiny evaluator over ``prim.impl`` is the oracle for the passes."""
import re

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from jaxpr_ir import (ClosedJaxpr, Eqn, Jaxpr, Literal, ParseError, Primitive, ShapedArray,
                      TypeCheckError, Var, check, cse, dce, dce_used_inputs, fold_constants,
                      inline_calls, parse, pp_jaxpr, primitives, simplify)
from jaxpr_ir import dtype_kind
from jaxpr_ir.dtypes import SUPPORTED

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
f64, f32, i32, b1 = (np.dtype(d) for d in ("float64", "float32", "int32", "bool"))
DTYPES = sorted(SUPPORTED, key=str)
BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
SHAPES = [(), (0,), (3,), (2, 3), (1, 0, 2)]
pytestmark = pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")  # casts

# ------------------------------------------------------------ test primitives


def _mutated(obj, **attrs):   # also builds what constructors refuse to build
    for k, v in attrs.items():
        setattr(obj, k, v)
    return obj


def _prim(name, **attrs):
    return _mutated(primitives.get(name) or Primitive(name), **attrs)


def _sig(avals):
    return [(a.shape, a.dtype) for a in avals]


def _binop_rule(x, y):
    if x.shape != y.shape and () not in (x.shape, y.shape):
        raise TypeError(f"shapes {x.shape} and {y.shape} differ")
    if x.dtype != y.dtype and not (x.weak_type or y.weak_type):
        raise TypeError(f"dtypes {x.dtype} and {y.dtype} differ")
    strong = y if x.weak_type else x
    return ShapedArray(x.shape or y.shape, strong.dtype, x.weak_type and y.weak_type)


def _sin_rule(x):
    if x.dtype.kind not in "fc":
        raise TypeError(f"irt_sin needs a float, got {x.dtype}")
    return x


def _sum_rule(x, *, axes):
    if any(not 0 <= a < x.ndim for a in axes):
        raise ValueError(f"axes {axes} out of range for {x}")
    return ShapedArray([d for k, d in enumerate(x.shape) if k not in axes], x.dtype)


def _cond_rule(pred, *ops, branches):
    if pred.shape != () or pred.dtype.kind not in "bi":
        raise TypeError(f"predicate must be a scalar bool or int, got {pred}")
    outs = None
    for k, br in enumerate(branches):
        if _sig(br.in_avals) != _sig(ops):
            raise TypeError(f"branch {k} takes {br.in_avals} but operands are {list(ops)}")
        if outs is not None and _sig(br.out_avals) != _sig(outs):
            raise TypeError(f"branch {k} returns {br.out_avals}, branch 0 returns {outs}")
        outs = [a.strip_weak() for a in br.out_avals]
    return outs


PRINTED = []
add_p = _prim("irt_add", abstract_eval=_binop_rule, impl=np.add)
mul_p = _prim("irt_mul", abstract_eval=_binop_rule, impl=np.multiply)
sin_p = _prim("irt_sin", abstract_eval=_sin_rule, impl=np.sin)
sum_p = _prim("irt_sum", abstract_eval=_sum_rule,
              impl=lambda x, *, axes: np.asarray(np.sum(x, axis=axes, dtype=x.dtype)))
cast_p = _prim("irt_cast", abstract_eval=lambda x, *, new_dtype: ShapedArray(x.shape, new_dtype),
               impl=lambda x, *, new_dtype: np.asarray(x).astype(new_dtype))
bcast_p = _prim("irt_bcast", abstract_eval=lambda x, *, shape: ShapedArray(shape, x.dtype),
                impl=lambda x, *, shape: np.broadcast_to(x, shape))
pair_p = _prim("irt_pair", multiple_results=True, abstract_eval=lambda x: [x, x],
               impl=lambda x: [x, x])
tag_p = _prim("irt_tag", abstract_eval=lambda x, /, **params: x, impl=lambda x, /, **params: x)
print_p = _prim("irt_print", multiple_results=True, has_effects=True,
                abstract_eval=lambda *xs, **params: [],
                impl=lambda *xs, **params: PRINTED.append([np.copy(x) for x in xs]) or [])
cond_p = _prim("irt_cond", multiple_results=True, subjaxpr_params=("branches",),
               abstract_eval=_cond_rule,
               impl=lambda pred, *ops, branches:
                   evaluate(branches[min(int(pred), len(branches) - 1)], *ops))
call_p = _prim("irt_call", multiple_results=True, call_param="jaxpr",  # check() does the rest
               abstract_eval=lambda *args, jaxpr: [a.strip_weak() for a in jaxpr.out_avals],
               impl=lambda *args, jaxpr: evaluate(jaxpr, *args))


def evaluate(jaxpr, *args, consts=()):
    """The oracle: run a jaxpr equation by equation with numpy impls."""
    if isinstance(jaxpr, ClosedJaxpr):
        jaxpr, consts = jaxpr.jaxpr, jaxpr.consts
    env = dict(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, args))
    read = lambda x: np.asarray(x.val) if isinstance(x, Literal) else env[x]  # noqa: E731
    for e in jaxpr.eqns:
        with np.errstate(all="ignore"):
            out = e.primitive.impl(*map(read, e.inputs), **e.params)
        out = out if e.primitive.multiple_results else [out]
        env.update((v, np.asarray(o, v.aval.dtype)) for v, o in zip(e.outvars, out, strict=True))
    return [read(x) for x in jaxpr.outvars]


def V(shape=(), dtype=f64, weak=False):
    return Var(ShapedArray(shape, dtype, weak))


a_, b_, c_, x_ = V(), V(), V(), V()
a3, b3, c4, i3 = V((3,)), V((3,)), V((4,)), V((3,), i32)


def J(invars, eqns, outvars, constvars=()):
    return Jaxpr(constvars, invars, eqns, outvars)


def E(prim, inputs, outvars, **params):
    return Eqn(prim, inputs, outvars, params)


_id = ClosedJaxpr(J([x_], [], [x_]))
# the same jit body called twice: one ClosedJaxpr object in two equations
SHARED = J([a_], [E(call_p, [a_], [b_], jaxpr=_id), E(call_p, [b_], [c_], jaxpr=_id)], [c_])


def eqn(prim, inputs, **params):
    """An equation with outvars typed by the primitive's rule, and those outvars."""
    out = prim.abstract_eval(*[x.aval for x in inputs], **params)
    outvars = [Var(a) for a in (out if prim.multiple_results else [out])]
    return Eqn(prim, inputs, outvars, params), outvars


def roundtrip(j):
    j2 = parse(text := pp_jaxpr(j))
    assert pp_jaxpr(j2) == text
    return j2


def rich_jaxpr():
    """A jaxpr using every printable feature."""
    c, a, b, z = V((3,)), V((3,)), V((), f32, weak=True), V((1, 0, 2), i32)
    e1, (d,) = eqn(add_p, [a, c])
    e2, (s,) = eqn(sum_p, [d], axes=(0,))
    e3, (p, q) = eqn(pair_p, [s])
    e4, _ = eqn(print_p, [p, z], fmt="x = {}")
    lits = [Literal(v, ShapedArray((), dt)) for v, dt in [
        (np.inf, f64), (-np.inf, f32), (np.nan, "float16"), (-2.5, f64), (-0.0, f64),
        (-7, i32), (255, "uint8"), (-128, "int8"), (2**63 - 1, "int64"), (4000000000, "uint32"),
        (2**64 - 1, "uint64"),
        (True, b1), (False, b1), (1 + 2j, "complex64"), (complex(-np.inf, np.nan), "complex128"),
        (-1j, "complex128"), (0.1, f32)]] + [Literal(2.0), Literal(3), Literal(True), Literal(1j)]
    e5, _ = eqn(print_p, lits)
    # fresh vars per sub-jaxpr: the printer cannot print one Var object twice (see below)
    br0 = lambda: ClosedJaxpr(Jaxpr([], [x := V()], [], [x]))  # noqa: E731

    def br1():
        e_sin, (ys,) = eqn(sin_p, [y := V()])
        return ClosedJaxpr(Jaxpr([], [y], [e_sin], [ys]))
    e6, (r,) = eqn(cond_p, [Literal(True), s], branches=(br0(), br1()))
    w = V((3,))
    e_in, (wo,) = eqn(mul_p, [w, Literal(2.0, ShapedArray((), f64))])
    e7, (t,) = eqn(call_p, [a], jaxpr=ClosedJaxpr(Jaxpr([], [w], [e_in], [wo])))
    params = dict(i=-3, big=10**30, f=1.5e-300, nf=-np.inf, nan=np.nan, cx=complex(0, np.inf),
                  t1=(1,), t0=(), nested=((1, (2.5, None)), ("a", True)), none=None, yes=True,
                  no=False, dt=f32, dts=(np.dtype("bool"), np.dtype("complex128")),
                  word="foo_bar.baz", quoted=("it's", "back\\slash", "two\nlines", "", "inf",
                                               "float32", "True", "with space", "in"),
                  sub=br1(), subs=(br0(), ("label", br0())))
    e8, (u,) = eqn(tag_p, [t], **params)
    eqns = [e1, e2, e3, e4, e5, e6, e7, e8]
    return Jaxpr([c], [a, b, z], eqns, [u, q, r, a, Literal(-1.5, ShapedArray((), f32)), b])


# ---------------------------------------------------------------- round trips

def test_roundtrip_rich_jaxpr_and_check():
    j = rich_jaxpr()
    check(j)
    j2 = roundtrip(j)
    check(j2)
    assert [v.hint for v in j2.invars] == ["b", "c", "d"]
    p = j2.eqns[-1].params
    assert p["t1"] == (1,) and p["t0"] == () and p["none"] is None and p["big"] == 10**30
    assert p["dt"] == np.dtype("float32") and isinstance(p["dt"], np.dtype) and np.isnan(p["nan"])
    assert p["word"] == "foo_bar.baz" and p["quoted"][1] == "back\\slash"
    assert isinstance(p["sub"], ClosedJaxpr) and p["sub"].consts == []
    assert p["nested"] == ((1, (2.5, None)), ("a", True))
    lits = j2.eqns[4].inputs
    assert lits[0].val == np.inf and lits[1].aval.dtype == f32 and np.isnan(lits[2].val)
    assert lits[-4].aval.weak_type and not lits[0].aval.weak_type
    assert isinstance(j2.outvars[4], Literal) and j2.outvars[3] is j2.invars[0]
    for text in ["{ lambda ; . let  in () }",
                 "{ lambda a:f64[3]; . let  in (a,) }",
                 "{ lambda ; a:f64[0,2] b:bool[]{weak}. let  in (b, a, 1:i64[]{weak}) }",
                 "{ lambda ; a:c64[]. let\n    _ = irt_print a\n  in () }"]:
        assert pp_jaxpr(parse(text)) == text
        check(parse(text))


def test_sub_jaxpr_with_constvars_stays_bare():
    inner = J([], [], [a_], [a_])   # prints with constvars, so no consts to close it with
    j2 = roundtrip(J([], [eqn(tag_p, [Literal(1.0)], body=inner)[0]], []))
    assert isinstance(j2.eqns[0].params["body"], Jaxpr)


def test_var_names_that_look_like_keywords():
    # names run a..z, ba..; a long program reaches 'in', 'inf', 'let' and 'nan'
    vs = [a_] + [V() for _ in range(8900)]
    text = pp_jaxpr(J([a_], [E(add_p, [u, a_], [v]) for u, v in zip(vs, vs[1:])], [vs[-1], a_]))
    for name in ("in", "inf", "let", "nan"):
        assert re.search(rf"\n    {name}:f64\[\] = irt_add", text)
    assert pp_jaxpr(parse(text)) == text


_param_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.complex_numbers(),
              st.text(), st.sampled_from(["inf", "nan", "True", "lambda", "float32", "a.b"]),
              st.sampled_from(DTYPES)),
    lambda inner: st.one_of(st.tuples(inner), st.lists(inner, max_size=3).map(tuple)),
    max_leaves=8)


@SETTINGS
@given(st.dictionaries(st.from_regex(r"[a-z_][a-z0-9_]{0,6}", fullmatch=True), _param_values,
                       max_size=4))
def test_roundtrip_random_params(params):
    a = V()
    e, (b,) = eqn(tag_p, [a], **params)
    e2, _ = eqn(print_p, [b, Literal(1.0)], **params)
    j2 = roundtrip(Jaxpr([], [a], [e, e2], [b]))
    check(j2)


def test_roundtrip_shared_sub_jaxpr():
    roundtrip(SHARED)


def _literal(dtype, weak=False):
    d, bits = np.dtype(dtype), 8 * np.dtype(dtype).itemsize
    kind = dtype_kind(d)                 # bfloat16's numpy kind is 'V'
    if d == BFLOAT16:                    # float32 values rounded to bfloat16's 8-bit mantissa
        vals = st.floats(width=32).map(lambda v: float(np.float32(v).astype(BFLOAT16)))
    else:
        vals = (st.booleans() if kind == "b" else st.floats(width=bits) if kind == "f" else
                st.complex_numbers(width=bits) if kind == "c" else
                st.integers(int(np.iinfo(d).min), int(np.iinfo(d).max)))
    return vals.map(lambda v: Literal(v, ShapedArray((), d, weak)))


@st.composite
def programs(draw):
    """A random type-correct straight-line program over the irt_* primitives."""
    aval = st.builds(ShapedArray, st.sampled_from(SHAPES), st.sampled_from(DTYPES))
    constvars = [Var(a) for a in draw(st.lists(aval, max_size=2))]
    invars = [Var(a) for a in draw(st.lists(aval, max_size=4))]
    pool, eqns = constvars + invars, []
    for _ in range(draw(st.integers(0, 10))):
        x = draw(st.sampled_from(pool) if pool and draw(st.booleans()) else
                 _literal(draw(st.sampled_from(DTYPES)), draw(st.booleans())))
        op = draw(st.sampled_from(["add", "mul", "sin", "sum", "cast", "pair", "print",
                                   "bcast", "tag"]))
        if op in ("add", "mul"):
            same = [v for v in pool if v.aval.strip_weak() == x.aval.strip_weak()]
            y = draw(st.sampled_from(same) if same and draw(st.booleans()) else
                     _literal(x.aval.dtype))
            e = eqn(add_p if op == "add" else mul_p, [x, y])
        elif op == "sin" and x.aval.dtype.kind in "fc":
            e = eqn(sin_p, [x])
        elif op == "sum" and x.aval.ndim:
            axes = draw(st.lists(st.integers(0, x.aval.ndim - 1), unique=True))
            e = eqn(sum_p, [x], axes=tuple(sorted(axes)))
        elif op in ("pair", "print"):
            e = eqn(pair_p if op == "pair" else print_p, [x])
        elif op == "bcast" and x.aval.ndim == 0:
            e = eqn(bcast_p, [x], shape=draw(st.sampled_from(SHAPES)))
        elif op == "tag":
            e = eqn(tag_p, [x], label=draw(st.text(max_size=5)), k=draw(st.integers()))
        else:
            e = eqn(cast_p, [x], new_dtype=draw(st.sampled_from(DTYPES)))
        eqns.append(e[0])
        pool += e[1]
    outs = draw(st.lists(st.sampled_from(pool) if pool else _literal(f64), max_size=3))
    return Jaxpr(constvars, invars, eqns, outs)


@SETTINGS
@given(programs())
def test_random_programs_roundtrip_and_check(j):
    check(j)
    check(roundtrip(j))


def _run(j, vals):
    PRINTED.clear()
    out = evaluate(j, *vals[len(j.constvars):], consts=vals[:len(j.constvars)])
    return out + [x for printed in PRINTED for x in printed], len(PRINTED)


def _same_results(j1, j2):
    """j1 and j2 compute the same outputs and print the same values, on random inputs."""
    rng = np.random.default_rng(0)
    vals = [(rng.normal(size=v.aval.shape) * 4 + 1j * rng.normal(size=v.aval.shape)
             if v.aval.dtype.kind == "c" else rng.normal(size=v.aval.shape) * 4)
            .astype(v.aval.dtype) for v in j1.constvars + j1.invars]
    (r1, n1), (r2, n2) = _run(j1, vals), _run(j2, vals)
    assert len(r1) == len(r2) and n1 == n2
    for x, y in zip(r1, r2):
        np.testing.assert_array_equal(x, y)


@SETTINGS
@given(programs())
def test_simplify_preserves_meaning_and_types(j):
    _, s = _golden(simplify, j)
    assert s.invars == j.invars and s.constvars == j.constvars
    assert len(s.eqns) <= len(j.eqns)
    assert sum(e.primitive is print_p for e in s.eqns) == \
        sum(e.primitive is print_p for e in j.eqns)


# ------------------------------------------------------------------ fuzzing

def _only_parse_errors(text):
    try:
        j = parse(text)
    except ParseError as e:
        assert re.match(r"line \d+, column \d+: ", str(e))
        return
    # whatever parses must print, re-parse identically, and check() only TypeCheckErrors
    assert pp_jaxpr(parse(pp_jaxpr(j))) == pp_jaxpr(j)
    try:
        check(j)
    except TypeCheckError:
        pass


JAXPR_CHARS = "{}()[];.:=,_' \n\\abcdefijlmnrstwxy0123456789-+eEjfinalmbd"


@SETTINGS
@given(st.one_of(st.text(), st.text(alphabet=JAXPR_CHARS)))
def test_fuzz_random_text(text):
    _only_parse_errors(text)


@SETTINGS
@given(st.one_of(programs().map(pp_jaxpr), st.just(pp_jaxpr(rich_jaxpr()))), st.data())
def test_fuzz_mutated_text(text, data):
    for _ in range(data.draw(st.integers(1, 3))):
        i, k = data.draw(st.integers(0, len(text))), data.draw(st.integers(0, 6))
        new = data.draw(st.text(alphabet=JAXPR_CHARS, max_size=4))
        text = data.draw(st.sampled_from([   # truncate, delete, insert, swap two chars
            text[:i], text[:i] + text[i + k:], text[:i] + new + text[i:],
            text[:i] + text[i + k:i + k + 1] + text[i + 1:i + k] + text[i:i + 1]
            + text[i + k + 1:]]))
    _only_parse_errors(text)


def test_deep_nesting_is_a_parse_error():
    for text in ["{ lambda ; . let\n    _ = irt_print[x=" + "(" * 5000,
                 "{ lambda ; . let\n    _ = irt_tag[b=" * 3000]:
        with pytest.raises(ParseError, match="nesting"):
            parse(text)
    with pytest.raises(ParseError):
        parse(None)


@pytest.mark.parametrize("text, line, col, what", [
    ("{ lambda ; a:f64[3]. let\n    b:f64[3] = irt_sin c\n  in (b,) }", 2, 24, "'c' is used"),
    ("{ lambda ; a:f64[3]. let\n    b:f64[3] = irt_nope a\n  in (b,) }", 2, 16,
     "unknown primitive 'irt_nope'"),
    ("{ lambda ; a:f99[3]. let  in (a,) }", 1, 14, "expected a dtype"),
    ("{ lambda ; a:f64[3] let  in (a,) }", 1, 21, "expected '.' or another 'name:type'"),
    ("{ lambda ; a:f64[]. let\n    b:f64[] c = irt_sin a\n  in (b,) }", 2, 13,
     "expected '=' or another"),
    ("{ lambda ; a:f64[3]. let\n  in (a,)", 2, 10, "expected '}'.*end of input"),
    ("{ lambda ; a:f64[]. let  in (a, 1.0:i32[]) }", 1, 33, "does not fit"),
    ("{ lambda ; a:f64[]. let  in (300:u8[],) }", 1, 30, "out of range"),
    ("{ lambda ; a:f64[]. let  in (18446744073709551616:u64[],) }", 1, 30, "out of range"),
    ("{ lambda ; a:f64[]. let  in (-1:u64[],) }", 1, 30, "out of range"),
    ("{ lambda ; a:f64[]. let  in (1e300:f32[],) }", 1, 30, "out of range"),
    ("{ lambda ; a:f64[]. let  in (1.0:f64[2],) }", 1, 30, "scalar"),
    ("{ lambda ; a:f64[] a:f64[]. let  in (a,) }", 1, 20, "defined twice"),
    ("{ lambda ; a:f64[]. let\n    b:f64[] = irt_tag[k=(1) ] a\n  in (b,) }", 2, 27, "','"),
    ("{ lambda ; a:f64[]. let\n    b:f64[] = irt_tag[k='x] a\n  in (b,) }", 2, 25, "quote"),
    ("{ lambda ; a:f64[]. let\n    b:f64[] = irt_sin b\n  in (b,) }", 2, 23, "'b' is used"),
    ("{ lambda ; a:f64[]. let\n    b:f64[] = irt_tag[body={ lambda ; c:f64[]. let  in (a,) }] a"
     "\n  in (b,) }", 2, 57, "'a' is used but not defined"),    # sub-jaxprs see only their own
])
def test_parse_error_positions(text, line, col, what):
    with pytest.raises(ParseError, match=what) as info:
        parse(text)
    assert (info.value.line, info.value.column) == (line, col), str(info.value)
    assert str(info.value).startswith(f"line {line}, column {col}: ")


# ------------------------------------------------------------- type checker

_ghost = Primitive("irt_ghost")
_ghost.abstract_eval = lambda x: x
del primitives["irt_ghost"]                     # an object the registry does not know
_bad_lit = lambda **attrs: _mutated(Literal(1.0), **attrs)  # noqa: E731

CHECK_CASES = {  # name: (jaxpr builder, patterns the message must match)
    "message": (lambda: J([a3, b3], [E(add_p, [a3, b3], [c4])], [c4]),
                [r"^in equation 'c:f64\[4\] = irt_add a b': output 0 is declared f64\[4\] "
                 r"but 'irt_add' gives f64\[3\]"]),
    "arity2": (lambda: J([a3], [E(add_p, [a3], [b3])], [b3]), ["wrong number of inputs"]),
    "n_outs": (lambda: J([a3], [E(pair_p, [a3], [b3])], [b3]), ["produces 2 outputs but .* 1"]),
    "n_outs0": (lambda: J([a3], [E(sin_p, [a3], [])], []), ["produces 1 outputs but .* 0"]),
    "dtype": (lambda: J([a3], [E(sin_p, [a3], [V((3,), f32)])], []), ["declared f32.*gives f64"]),
    "rule": (lambda: J([i3], [E(sin_p, [i3], [b3])], []), ["TypeError: irt_sin needs a float"]),
    "rule_value": (lambda: J([a3], [E(sum_p, [a3], [a_], axes=(1,))], []), ["ValueError: axes"]),
    "no_param": (lambda: J([a3], [E(sum_p, [a3], [a_])], []), ["params"]),
    "before_def": (lambda: J([a_], [E(sin_p, [b_], [c_]), E(sin_p, [a_], [b_])], [c_]),
                   [r"in equation 'b:f64\[\] = irt_sin <undefined", "used before it is def"]),
    "out_undef": (lambda: J([a_], [], [b_]), ["in jaxpr signature: output 0: .*used before"]),
    "twice_eqns": (lambda: J([a_], [E(sin_p, [a_], [b_]), E(sin_p, [a_], [b_])], [b_]),
                   ["variable 'b' \\(f64\\[\\]\\) is defined twice"]),
    "twice_invar": (lambda: J([a_, a_], [], [a_]), ["defined twice"]),
    "twice_const": (lambda: J([a_], [], [a_], [a_]), ["defined twice"]),
    "twice_input": (lambda: J([a_], [E(sin_p, [a_], [a_])], [a_]), ["defined twice"]),
    "twice_nested": (lambda: J([a_], [E(cond_p, [Literal(1), a_], [c_], branches=(
        ClosedJaxpr(J([x_], [E(sin_p, [x_], [b_])], [b_])),)), E(sin_p, [a_], [b_])], [b_]),
                     ["defined twice"]),
    "twice_sub_invar": (lambda: J([x_], [E(cond_p, [Literal(1), x_], [c_], branches=(_id,))], []),
                        ["defined twice", "inside param 'branches'"]),
    "outer_var": (lambda: J([a_], [E(cond_p, [Literal(0), a_], [c_],
                                     branches=(ClosedJaxpr(J([x_], [], [a_])),))], []),
                  ["not defined in this jaxpr"]),
    "branch_sig": (lambda: J([a3], [E(cond_p, [Literal(True), a3], [b3],
                                      branches=(ClosedJaxpr(J([b_], [], [b_])), _id))], []),
                   ["branch 0 takes"]),
    "call_ins": (lambda: J([a_], [E(call_p, [a_, a_], [b_], jaxpr=_id)], []),
                 ["called jaxpr 'jaxpr' has 1 inputs but the equation has 2"]),
    "call_outs": (lambda: J([a_], [E(call_p, [a_], [a3], jaxpr=_id)], []),
                  [r"output 0 is f64\[3\] but the called jaxpr 'jaxpr' expects f64\[\]"]),
    "n_consts": (lambda: _mutated(ClosedJaxpr(J([], [], [a_], [a_]), [1.0]), consts=[1.0, 2.0]),
                 ["1 constvars but 2 consts"]),
    "consts": (lambda: ClosedJaxpr(J([], [], [a_], [a_]), [np.zeros(3)]), ["const 0 has shape"]),
    "unknown": (lambda: J([a_], [E(_ghost, [a_], [b_])], [b_]), ["'irt_ghost' is not registered"]),
    "lit_shape": (lambda: J([a_], [E(add_p, [a_, _bad_lit(aval=a3.aval)], [b_])], [b_]),
                  ["input 1: literal .*scalar"]),
    "lit_dtype": (lambda: J([a_], [E(add_p, [a_, _bad_lit(val=np.int32(1))], [b_])], [b_]),
                  ["holds a int32"]),
    "lit_out": (lambda: J([a_], [], [_bad_lit(val=np.int32(1))]),
                ["in jaxpr signature: output 0: literal"]),
    "not_atom": (lambda: J([a_], [E(add_p, [a_, 1.0], [b_])], [b_]), ["neither a Var nor"]),
    "not_jaxpr": (lambda: "not a jaxpr", ["expected a Jaxpr"]),
    "long": (lambda: J([a_], [E(call_p, [a_, a_], [b_], jaxpr=ClosedJaxpr(J(
        [x_], [E(sin_p, [x_], [V()]) for _ in range(50)], [x_])))], []), ["^.{,240}': called"]),
}


@pytest.mark.parametrize("case", CHECK_CASES)
def test_check_errors(case):
    build, patterns = CHECK_CASES[case]
    with pytest.raises(TypeCheckError) as info:
        check(build())
    for p in patterns:
        assert re.search(p, str(info.value), re.S), str(info.value)
    if case not in ("out_undef", "lit_out", "not_jaxpr", "consts", "n_consts",
                    "twice_invar", "twice_const"):
        assert isinstance(info.value.eqn, Eqn)


def test_check_shared_sub_jaxpr_is_fine():
    check(SHARED)   # one body object, one scope: its vars are not "defined twice"


# ------------------------------------------------------------------- passes

def _golden(pass_, src, expected=None):
    """pass_(src) prints as expected, type-checks, computes the same, mutates nothing."""
    j = parse(src) if isinstance(src, str) else src
    before = pp_jaxpr(j)
    out = pass_(j)
    assert pp_jaxpr(j) == before
    assert expected is None or pp_jaxpr(out) == expected
    check(out)
    _same_results(j, out)
    return j, out


def test_dce_removes_dead_code_keeps_effects():
    e1, (b,) = eqn(sin_p, [a3])
    e2, (c,) = eqn(add_p, [a3, a3])          # dead
    e3, _ = eqn(print_p, [b])                # an effect: kept, and keeps e1 alive
    e4, (d,) = eqn(mul_p, [a3, a3])
    br = ClosedJaxpr(J([y := V()], [eqn(print_p, [y])[0]], [y]))
    e5, _ = eqn(cond_p, [Literal(True), Literal(1.0)], branches=(br,))   # effect inside
    j = J([a3], [e1, e2, e3, e4, e5], [d])
    assert [e.primitive for e in _golden(dce, j)[1].eqns] == \
        [sin_p, print_p, mul_p, cond_p]
    assert [e.primitive for e in dce(j, [False]).eqns] == [sin_p, print_p, cond_p]
    assert dce(j, [False]).outvars == [] and dce(j).invars == j.invars
    with pytest.raises(ValueError):
        dce(j, [True, True])
    assert dce_used_inputs(J([a3, b3, c4], [e2, e4], [c, b3])) == [True, True, False]


def test_dce_inside_sub_jaxprs_and_closed():
    y = V()
    dead, _ = eqn(sin_p, [y])
    br = ClosedJaxpr(J([y], [dead], [y]))
    e, (r,) = eqn(cond_p, [Literal(0), a_], branches=(br, br))
    out = dce(ClosedJaxpr(J([a_], [e], [r])))
    assert isinstance(out, ClosedJaxpr)
    b0, b1 = out.eqns[0].params["branches"]
    assert b0 is b1 and b0.eqns == [] and br.eqns == [dead]   # shared stays shared


def test_cse_merges_duplicates():
    # 1 and 1.0 params differ, so do 2.0 and -0.0 literals; effects never merge
    _golden(cse, """{ lambda ; a:f64[] b:f64[]. let
    c:f64[] = irt_add a b
    d:f64[] = irt_add a b
    e:f64[] = irt_mul c 2.0:f64[]
    f:f64[] = irt_mul d 2.0:f64[]
    g:f64[] = irt_mul d -0.0:f64[]
    h:f64[] = irt_tag[k=1] a
    i:f64[] = irt_tag[k=1.0] a
    j:f64[] = irt_tag[k=1] a
    _ = irt_print a
    _ = irt_print a
    l:f64[] = irt_cond[branches=({ lambda ; k:f64[]. let  in (k,) },)] 1:i32[] a
    n:f64[] = irt_cond[branches=({ lambda ; m:f64[]. let  in (m,) },)] 1:i32[] a
  in (c, d, e, f, g, h, i, j, l, n) }""", """{ lambda ; a:f64[] b:f64[]. let
    c:f64[] = irt_add a b
    d:f64[] = irt_mul c 2.0:f64[]
    e:f64[] = irt_mul c -0.0:f64[]
    f:f64[] = irt_tag[k=1] a
    g:f64[] = irt_tag[k=1.0] a
    _ = irt_print a
    _ = irt_print a
    i:f64[] = irt_cond[branches=({ lambda ; h:f64[]. let  in (h,) },)] 1:i32[] a
  in (c, c, d, d, e, f, g, f, i, i) }""")


def test_fold_constants():
    # scalar chains fold; var inputs, non-scalar results and effects stay
    _golden(fold_constants, """{ lambda ; a:f64[3]. let
    b:f64[] = irt_add 2.0:f64[] 3.0:f64[]
    c:f64[] = irt_mul b b
    d:f64[3] = irt_add a c
    e:f64[3] = irt_bcast[shape=(3,)] 2.0:f64[]
    _ = irt_print c
    f:f32[] = irt_sin 0.5:f32[]
  in (c, d, e, f) }""", """{ lambda ; a:f64[3]. let
    b:f64[3] = irt_add a 25.0:f64[]
    c:f64[3] = irt_bcast[shape=(3,)] 2.0:f64[]
    _ = irt_print 25.0:f64[]
  in (25.0:f64[], b, c, 0.4794255495071411:f32[]) }""")


def _nested_calls():
    """Two calls of one body that calls a function, directly and inside a cond branch."""
    x, y, br_y, a = V((3,)), V((3,)), V((3,)), V((3,))
    e_in, (x2,) = eqn(mul_p, [x, x])
    inner = ClosedJaxpr(J([x], [e_in, eqn(print_p, [x2])[0]], [x2, x]))
    e_c1, (y2, y3) = eqn(call_p, [y], jaxpr=inner)
    e_c2, (z1, _) = eqn(call_p, [br_y], jaxpr=inner)
    br = ClosedJaxpr(J([br_y], [e_c2], [z1]))
    e_cond, (y4,) = eqn(cond_p, [Literal(1), y2], branches=(br, br))
    outer = ClosedJaxpr(J([y], [e_c1, e_cond], [y4, y3, Literal(7.0)]))
    e1, (b, c, d) = eqn(call_p, [a], jaxpr=outer)
    e2, (f, g, h) = eqn(call_p, [b], jaxpr=outer)        # same body twice: fresh vars
    return J([a], [e1, e2], [f, c, h, d])


def test_inline_calls_and_simplify():
    j = _nested_calls()
    check(j)
    _, out = _golden(inline_calls, j)
    assert [e.primitive for e in out.eqns] == [mul_p, print_p, cond_p] * 2   # none left...
    assert "irt_call" not in pp_jaxpr(out)                                   # ...nor nested
    assert isinstance(out.outvars[2], Literal) and out.outvars[1] is out.invars[0]
    out = simplify(j)
    check(out)
    _same_results(j, out)
    # the shared cond branches were inlined once, so both conds still share one body
    conds = [e for e in out.eqns if e.primitive is cond_p]
    assert conds[0].params["branches"][0] is conds[1].params["branches"][1]
