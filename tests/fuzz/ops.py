"""The fuzzer's op table: each row is one construct written twice, as functrans source
and as numpy source, from the same operands and parameters.

``{a}``/``{b}`` in a template are operand names; other fields come from the row's
``params`` function, drawn from the operands' numpy values (so shapes always fit).
``smooth`` rows are continuous and differentiable almost everywhere (kinks such as
``abs``, ``max`` or ``sort`` allowed, jumps such as ``floor``, casts to int or a
data-dependent branch not): a program made only of them is checked against central
finite differences, which a random point lies a step away from a kink with
probability about 1 - 1e-6."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

Arrays = list  # the operands' numpy values


def _none(rng, arrs) -> dict:
    return {}


@dataclass(frozen=True)
class Op:
    name: str
    feature: str
    arity: int
    ft: str
    np: str
    accepts: Callable[[Arrays], bool]
    smooth: bool = False
    params: Callable = field(default=_none)


def kinds(allowed: str) -> Callable[[Arrays], bool]:
    """Accept operands whose dtype kinds ('f', 'i', 'u', 'b') are all in ``allowed``."""
    return lambda arrs: all(a.dtype.kind in allowed for a in arrs)


def _broadcastable(arrs) -> bool:
    try:
        np.broadcast_shapes(*(a.shape for a in arrs))
        return True
    except ValueError:
        return False


def _same_kind_binary(allowed: str) -> Callable[[Arrays], bool]:
    return lambda arrs: kinds(allowed)(arrs) and _broadcastable(arrs)


FLOAT, NUM, INT = "f", "fiu", "iu"

UNARY = [
    # name, ft, np, allowed kinds, smooth
    ("sin", "fnp.sin({a})", "np.sin({a})", FLOAT, True),
    ("cos", "fnp.cos({a})", "np.cos({a})", FLOAT, True),
    ("tanh", "fnp.tanh({a})", "np.tanh({a})", FLOAT, True),
    ("exp", "fnp.exp({a})", "np.exp({a})", FLOAT, True),
    ("arctan", "fnp.arctan({a})", "np.arctan({a})", FLOAT, True),
    ("log", "fnp.log({a})", "np.log({a})", FLOAT, True),
    ("sqrt", "fnp.sqrt({a})", "np.sqrt({a})", FLOAT, True),
    ("expm1", "fnp.expm1({a})", "np.expm1({a})", FLOAT, True),
    ("log1p", "fnp.log1p({a})", "np.log1p({a})", FLOAT, True),
    ("floor", "fnp.floor({a})", "np.floor({a})", FLOAT, False),
    ("reciprocal", "1.0 / {a}", "1.0 / {a}", FLOAT, True),
    ("neg", "-{a}", "-{a}", NUM, True),
    ("square", "{a} * {a}", "{a} * {a}", NUM, True),
    ("abs", "fnp.abs({a})", "np.abs({a})", NUM, True),
    ("sign", "fnp.sign({a})", "np.sign({a})", NUM, False),
    ("scale", "{a} * 3", "{a} * 3", NUM, True),
    ("shift", "{a} + 2", "{a} + 2", NUM, True),
    ("not", "fnp.logical_not({a})", "np.logical_not({a})", "b", False),
    ("floordiv", "{a} // 3", "{a} // 3", NUM, False),
    ("mod", "{a} % 3", "{a} % 3", NUM, False),
    ("cube", "{a} ** 3", "{a} ** 3", NUM, True),
    ("clip", "fnp.clip({a}, -1, 2)", "np.clip({a}, -1, 2)", NUM, True),
    ("round", "fnp.round({a})", "np.round({a})", FLOAT, False),
    ("logistic", "1.0 / (1.0 + fnp.exp(-{a}))", "1.0 / (1.0 + np.exp(-{a}))", FLOAT, True),
]
BINARY = [
    ("add", "{a} + {b}", "{a} + {b}", NUM, True),
    ("sub", "{a} - {b}", "{a} - {b}", NUM, True),
    ("mul", "{a} * {b}", "{a} * {b}", NUM, True),
    ("div", "{a} / {b}", "{a} / {b}", FLOAT, True),
    ("maximum", "fnp.maximum({a}, {b})", "np.maximum({a}, {b})", NUM, True),
    ("minimum", "fnp.minimum({a}, {b})", "np.minimum({a}, {b})", NUM, True),
    ("less", "{a} < {b}", "{a} < {b}", NUM, False),
    ("equal", "{a} == {b}", "{a} == {b}", "fiub", False),
    ("and", "fnp.logical_and({a}, {b})", "np.logical_and({a}, {b})", "b", False),
    ("or", "fnp.logical_or({a}, {b})", "np.logical_or({a}, {b})", "b", False),
]


def _elementwise_rows() -> list[Op]:
    rows = [Op(n, "elementwise", 1, f, p, kinds(k), s) for n, f, p, k, s in UNARY]
    rows += [Op(n, "elementwise", 2, f, p, _same_kind_binary(k), s) for n, f, p, k, s in BINARY]
    rows.append(Op("where", "where", 2, "fnp.where({a} > 0, {a}, {b})",
                   "np.where({a} > 0, {a}, {b})", _same_kind_binary(NUM)))
    rows.append(Op("to_f32", "cast", 1, "{a}.astype(fnp.float32)", "{a}.astype(np.float32)",
                   kinds("fiub"), True))
    rows.append(Op("to_f64", "cast", 1, "{a}.astype(fnp.float64)", "{a}.astype(np.float64)",
                   kinds("fiub"), True))
    rows.append(Op("to_int32", "cast", 1, "{a}.astype(fnp.int32)", "{a}.astype(np.int32)",
                   kinds("iub")))
    rows.append(Op("to_uint64", "cast", 1, "{a}.astype(fnp.uint64)", "{a}.astype(np.uint64)",
                   kinds("iub")))
    return rows


def _axis_params(rng, arrs) -> dict:
    a = arrs[0]
    axis = None if a.ndim == 0 or rng.random() < 0.3 else int(rng.integers(-a.ndim, a.ndim))
    return {"axis": axis, "keep": bool(rng.random() < 0.3)}


def _nonempty_axis_ok(arrs) -> bool:
    return arrs[0].size > 0 and arrs[0].dtype.kind in NUM


# name, accepts, smooth; each is f(a, axis=..., keepdims=...) in both libraries
REDUCTIONS = [
    ("sum", kinds(NUM), True), ("mean", kinds(FLOAT), True), ("prod", kinds(FLOAT), True),
    ("max", _nonempty_axis_ok, True), ("min", _nonempty_axis_ok, True),
    ("any", kinds("b"), False), ("var", kinds(FLOAT), True),
    ("argmax", _nonempty_axis_ok, False), ("argmin", _nonempty_axis_ok, False),
]


def _reduction_rows() -> list[Op]:
    call = "{lib}.{name}({{a}}, axis={{axis}}, keepdims={{keep}})"
    return [Op(n, "reduce", 1, call.format(lib="fnp", name=n), call.format(lib="np", name=n),
               acc, smooth, _axis_params) for n, acc, smooth in REDUCTIONS]


def _reshape_params(rng, arrs) -> dict:
    shape = arrs[0].shape
    choice = rng.integers(3)
    if choice == 0:
        return {"shape": (-1,)}
    if choice == 1:
        return {"shape": tuple(reversed(shape))}
    return {"shape": (1,) + shape}


def _slice_params(rng, arrs) -> dict:
    n = arrs[0].shape[0]
    choices = [f"{int(rng.integers(0, n + 1))}:", f"::{int(rng.integers(1, 3))}",
               f"{int(rng.integers(-n, n))}" if n else "0:0", "::-1", "..., None",
               f"{int(rng.integers(0, n + 1))}:{int(rng.integers(0, n + 1))}"]
    return {"idx": choices[int(rng.integers(len(choices)))]}


def _dims(lo: int) -> Callable[[Arrays], bool]:
    return lambda arrs: arrs[0].ndim >= lo


def _concat_ok(arrs) -> bool:
    a, b = arrs
    return a.ndim >= 1 and a.shape[1:] == b.shape[1:] and a.ndim == b.ndim


def _shape_rows() -> list[Op]:
    return [
        Op("reshape", "reshape", 1, "{a}.reshape({shape})", "{a}.reshape({shape})",
           lambda arrs: True, True, _reshape_params),
        Op("transpose", "reshape", 1, "{a}.T", "{a}.T", lambda arrs: True, True),
        Op("slice", "slice", 1, "{a}[{idx}]", "{a}[{idx}]", _dims(1), True, _slice_params),
        Op("concatenate", "reshape", 2, "fnp.concatenate([{a}, {b}], axis=0)",
           "np.concatenate([{a}, {b}], axis=0)", _concat_ok, True),
        Op("stack", "reshape", 1, "fnp.stack([{a}, {a} * 2])", "np.stack([{a}, {a} * 2])",
           kinds(NUM), True),
        Op("flip", "slice", 1, "fnp.flip({a}, axis=0)", "np.flip({a}, axis=0)", _dims(1), True),
        Op("roll", "slice", 1, "fnp.roll({a}, 1, axis=0)", "np.roll({a}, 1, axis=0)", _dims(1),
           True),
        Op("broadcast_to", "broadcast", 1, "fnp.broadcast_to({a}, (2,) + {a}.shape)",
           "np.broadcast_to({a}, (2,) + {a}.shape)", lambda arrs: True, True),
    ]


def _gather_ok(arrs) -> bool:
    a, b = arrs
    return a.ndim >= 1 and a.shape[0] > 0 and b.dtype.kind in INT


def _argmax_ok(arrs) -> bool:
    a, b = arrs
    return a.ndim >= 1 and a.shape[0] > 0 and b.size > 0 and b.dtype.kind in NUM


def _oob_params(rng, arrs) -> dict:
    return {"n": arrs[0].shape[0], "k": int(rng.integers(1, 5))}


def _at_params(rng, arrs) -> dict:
    a = arrs[0]
    const = {"f": "1.5", "i": "3", "u": "3", "b": "True"}[a.dtype.kind]
    n = a.shape[0]
    i = [str(int(rng.integers(-n, n))), f"{int(rng.integers(0, n))}:", "::2", "..., -1"]
    return {"i": i[int(rng.integers(len(i)))], "c": const, "n": n}


def _at_ok(allowed: str) -> Callable[[Arrays], bool]:
    return lambda arrs: arrs[0].ndim >= 1 and arrs[0].shape[0] > 0 and arrs[0].dtype.kind in allowed


def _index_rows() -> list[Op]:
    rows = [
        Op("gather", "computed_index", 2, "{a}[{b} % {n}]", "{a}[{b} % {n}]", _gather_ok,
           False, lambda rng, arrs: {"n": arrs[0].shape[0]}),
        Op("negative_gather", "computed_index", 2, "{a}[{b} % {n} - {n}]",
           "{a}[reference.clamp_index({b} % {n} - {n}, {n})]", _gather_ok, False,
           lambda rng, arrs: {"n": arrs[0].shape[0]}),
        Op("argmax_index", "computed_index", 2, "{a}[fnp.argmax({b}) % {a}.shape[0]]",
           "{a}[np.argmax({b}) % {a}.shape[0]]", _argmax_ok),
        Op("argmax_oob", "oob_index", 2, "{a}[fnp.argmax({b})]",
           "{a}[reference.clamp_index(np.argmax({b}), {a}.shape[0])]", _argmax_ok),
        Op("oob_gather", "oob_index", 2, "{a}[fnp.abs({b}) % {n} + {n} * {k}]",
           "{a}[reference.clamp_index(np.abs({b}) % {n} + {n} * {k}, {n})]",
           _gather_ok, False, _oob_params),
        Op("at_set", "at", 1, "{a}.at[{i}].set({c})", "reference.at_set({a}, np.s_[{i}], {c})",
           _at_ok("fiub"), True, _at_params),
        Op("at_add", "at", 1, "{a}.at[{i}].add({c})", "reference.at_add({a}, np.s_[{i}], {c})",
           _at_ok(NUM), True, _at_params),
        Op("at_mul", "at", 1, "{a}.at[{i}].multiply({c})", "reference.at_mul({a}, np.s_[{i}], {c})",
           _at_ok(NUM), True, _at_params),
        Op("at_max", "at", 1, "{a}.at[{i}].max({c})", "reference.at_max({a}, np.s_[{i}], {c})",
           _at_ok(NUM), True, _at_params),
        Op("at_add_computed", "at_computed", 2, "{a}.at[{b} % {n}].add({c})",
           "reference.at_add({a}, {b} % {n}, {c})",
           lambda arrs: _at_ok(NUM)(arrs[:1]) and arrs[1].dtype.kind in INT, True,
           lambda rng, arrs: _at_params(rng, arrs[:1])),
    ]
    return rows


def _dot_ok(arrs) -> bool:
    a, b = arrs
    return (a.dtype.kind in NUM and b.dtype.kind in NUM and 1 <= a.ndim <= 2
            and 1 <= b.ndim <= 2 and a.shape[-1] == b.shape[0])


def _linalg_rows() -> list[Op]:
    return [
        Op("dot", "dot", 2, "fnp.dot({a}, {b})", "np.dot({a}, {b})", _dot_ok, True),
        Op("gram", "dot", 1, "{a} @ {a}.T", "{a} @ {a}.T",
           lambda arrs: arrs[0].ndim in (1, 2) and arrs[0].dtype.kind in NUM, True),
        Op("cumsum", "cumsum", 1, "fnp.cumsum({a}, axis={axis})", "np.cumsum({a}, axis={axis})",
           lambda arrs: arrs[0].ndim >= 1 and arrs[0].dtype.kind in NUM, True,
           lambda rng, arrs: {"axis": int(rng.integers(-arrs[0].ndim, arrs[0].ndim))}),
        Op("sort", "sort", 1, "fnp.sort({a}, axis=-1)", "np.sort({a}, axis=-1)",
           lambda arrs: arrs[0].ndim >= 1 and arrs[0].dtype.kind in NUM, True),
        # float64 operands asked for a float32 product: formed in float64, rounded once
        Op("dot_f32", "dot", 2, "lax.dot({a}, {b}, preferred_element_type=fnp.float32)",
           "np.dot({a}, {b}).astype(np.float32)",
           lambda arrs: _dot_ok(arrs) and all(a.dtype == np.float64 for a in arrs)),
        # size= past the uniques: the padded first indices repeat the smallest value's
        Op("unique_index", "sort", 1, "fnp.unique({a}, return_index=True, size={n})[1]",
           "reference.unique_index({a}, {n})", kinds("fiub"), False,
           lambda rng, arrs: {"n": int(arrs[0].size + rng.integers(0, 3))}),
    ]


# Control-flow bodies keep the carry's dtype and shape, as lax requires.
FLOAT_BODIES = ["fnp.sin({v}) * 0.5", "{v} * 0.5 + 1.0", "fnp.tanh({v}) - {v}"]
NP_FLOAT_BODIES = ["np.sin({v}) * 0.5", "{v} * 0.5 + 1.0", "np.tanh({v}) - {v}"]
INT_BODIES = ["{v} * 3 + 1", "-{v}", "{v} - 1"]


def _body_params(rng, arrs) -> dict:
    floaty = arrs[0].dtype.kind == "f"
    pool_ft = FLOAT_BODIES if floaty else INT_BODIES
    pool_np = NP_FLOAT_BODIES if floaty else INT_BODIES
    i, j = rng.integers(len(pool_ft), size=2)
    return {"t_ft": pool_ft[i].format(v="v"), "f_ft": pool_ft[j].format(v="v"),
            "t_np": pool_np[i].format(v="v"), "f_np": pool_np[j].format(v="v"),
            "n": int(rng.integers(0, 4))}


def _control_rows() -> list[Op]:
    return [
        Op("cond", "cond", 1, "lax.cond(fnp.sum({a}) > 0, lambda v: {t_ft}, lambda v: {f_ft}, {a})",
           "reference.cond(np.sum({a}) > 0, lambda v: {t_np}, lambda v: {f_np}, {a})",
           kinds(NUM), False, _body_params),
        Op("fori", "fori", 1, "lax.fori_loop(0, {n}, lambda i, v: {t_ft}, {a})",
           "reference.fori_loop(0, {n}, lambda i, v: {t_np}, {a})", kinds(NUM), True, _body_params),
        Op("scan", "scan", 1, "lax.scan(lambda c, v: ({t_ft} + c, c * v), {a}[0], {a})[1]",
           "reference.scan(lambda c, v: ({t_np} + c, c * v), {a}[0], {a})[1]",
           lambda arrs: arrs[0].ndim >= 1 and arrs[0].shape[0] > 0 and arrs[0].dtype.kind in NUM,
           True, _body_params),
    ]


OPS: list[Op] = (_elementwise_rows() + _reduction_rows() + _shape_rows() + _index_rows()
                 + _linalg_rows() + _control_rows())
OP_BY_NAME = {op.name: op for op in OPS}
