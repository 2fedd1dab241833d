"""Seeded random programs over the op table, and their two renderings (functrans and
numpy source) from one description.

A program is a list of input arrays ``x0, x1, …`` and a list of steps ``vK = op(...)``
over earlier values; its result is its last value. While drawing, each step is run on
numpy at once, so every later step knows its operands' shapes and dtypes, and a step
numpy rejects is simply redrawn."""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

import functrans.numpy as fnp
from functrans import lax
from tests.fuzz import reference
from tests.fuzz.ops import OP_BY_NAME, OPS

DTYPES = {"f32": np.float32, "f64": np.float64, "int32": np.int32, "int64": np.int64,
          "uint8": np.uint8, "uint64": np.uint64, "bool": np.bool_}
SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, 1e-40, 1e300, -1e30, 3e38]


@dataclass
class Step:
    out: str
    op: str
    operands: tuple
    params: dict = field(default_factory=dict)


@dataclass
class Program:
    inputs: dict            # name -> numpy array
    steps: list             # of Step
    seed: int = 0

    @property
    def result(self) -> str:
        return self.steps[-1].out if self.steps else next(iter(self.inputs))

    def features(self) -> set:
        feats = {OP_BY_NAME[s.op].feature for s in self.steps}
        for a in self.inputs.values():
            feats.add(_dtype_feature(a.dtype))
            feats |= _shape_features(a)
            if a.dtype.kind == "f" and np.any(_is_special(a)):
                feats.add("special")
        return feats

    def smooth(self) -> bool:
        return all(OP_BY_NAME[s.op].smooth for s in self.steps)

    def source(self, lib: str = "ft", name: str = "f") -> str:
        """The program as Python source: ``lib='ft'`` uses fnp/lax, ``'np'`` numpy."""
        lines = [f"def {name}({', '.join(self.inputs)}):"]
        for s in self.steps:
            op = OP_BY_NAME[s.op]
            names = dict(zip("ab", s.operands))
            text = (op.ft if lib == "ft" else op.np).format(**names, **s.params)
            lines.append(f"    {s.out} = {text}")
        lines.append(f"    return {self.result}")
        return "\n".join(lines) + "\n"

    def inputs_source(self) -> str:
        return "\n".join(f"{k} = np.array({np.asarray(v).tolist()!r}, dtype=np.{v.dtype.name})"
                         .replace("nan", "np.nan").replace("inf", "np.inf")
                         for k, v in self.inputs.items())


def _is_special(a):
    """inf, NaN, ±0, subnormal-sized or huge (not what ``standard_normal`` draws)."""
    mag = np.abs(a.astype(np.float64))
    return ~np.isfinite(mag) | (mag < 1e-30) | (mag > 1e20)


def _dtype_feature(dtype) -> str:
    names = {v: k for k, v in DTYPES.items()}
    return names.get(np.dtype(dtype).type, np.dtype(dtype).name)


def _shape_features(a) -> set:
    feats = set()
    if a.ndim == 0:
        feats.add("scalar0d")
    if a.size == 0:
        feats.add("empty")
    return feats


def compile_program(program: Program, lib: str):
    """The program's function, built by executing its source."""
    namespace = {"np": np, "fnp": fnp, "lax": lax, "reference": reference}
    exec(program.source(lib), namespace)
    return namespace["f"]


def random_values(rng, shape, dtype, special: bool) -> np.ndarray:
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        vals = rng.standard_normal(shape) * 2.0
        if special and vals.size:
            mask = rng.random(shape) < 0.3
            vals = np.where(mask, rng.choice(SPECIALS, size=shape), vals)
        with np.errstate(over="ignore"):
            return vals.astype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    info = np.iinfo(dtype)
    if special and rng.random() < 0.5:
        return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dtype)
    return rng.integers(max(info.min, -9), 10, size=shape, dtype=dtype)


def _draw_shape(rng, exclude) -> tuple:
    r = rng.random()
    if r < 0.12 and "scalar0d" not in exclude:
        return ()
    shape = tuple(int(d) for d in rng.integers(1, 5, size=int(rng.integers(1, 4))))
    if r > 0.9 and "empty" not in exclude:
        shape = shape[:-1] + (0,)
    return shape


def _draw_inputs(rng, exclude) -> dict:
    allowed = [k for k in DTYPES if k not in exclude] or ["f64"]
    main = allowed[int(rng.integers(len(allowed)))]
    if rng.random() < 0.6 and "f64" in allowed:
        main = "f64" if rng.random() < 0.6 or "f32" not in allowed else "f32"
    shape = _draw_shape(rng, exclude)
    special = "special" not in exclude and rng.random() < 0.3
    inputs = {}
    for i in range(int(rng.integers(1, 4))):
        dt = main if rng.random() < 0.75 else allowed[int(rng.integers(len(allowed)))]
        s = shape
        if i and rng.random() < 0.3 and "broadcast" not in exclude:   # a broadcastable shape
            s = tuple(1 if rng.random() < 0.5 else d for d in shape)
            s = s[int(rng.integers(0, len(shape) + 1)):]
        inputs[f"x{i}"] = random_values(rng, s, DTYPES[dt], special)
    return inputs


def _try_step(rng, op, values: dict, env: dict):
    names = list(values)
    operands = tuple(names[int(rng.integers(len(names)))] for _ in range(op.arity))
    if op.arity == 2 and rng.random() < 0.5:   # prefer recent values: deeper programs
        operands = (names[-1],) + operands[1:]
    arrs = [values[n] for n in operands]
    if not op.accepts(arrs):
        return None
    params = op.params(rng, arrs)
    step = Step(f"v{len(values)}", op.name, operands, params)
    text = op.np.format(**dict(zip("ab", operands)), **params)
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            val = np.asarray(eval(text, env, dict(values)))
    except Exception:
        return None
    if val.dtype.kind not in "fiub" or val.size > 4096:
        return None
    return step, val


SMOOTH_SHARE = 0.3   # programs drawn from smooth rows on f64 only: finite differences apply


def generate(seed: int, exclude=frozenset(), max_steps: int = 10) -> Program:
    """A random valid program (numpy accepts it) using no feature in ``exclude``."""
    rng = np.random.default_rng(seed)
    exclude = set(exclude)
    ops = [op for op in OPS if op.feature not in exclude]
    if rng.random() < SMOOTH_SHARE and "f64" not in exclude:
        exclude |= (set(DTYPES) - {"f64"}) | {"special"}
        ops = [op for op in ops if op.smooth and op.name != "to_f32"]
    inputs = _draw_inputs(rng, exclude)
    values = dict(inputs)
    env = {"np": np, "reference": reference}
    steps = []
    n_steps = int(rng.integers(1, max_steps + 1))
    for _ in range(n_steps * 20):
        if len(steps) == n_steps:
            break
        drawn = _try_step(rng, ops[int(rng.integers(len(ops)))], values, env)
        if drawn is None:
            continue
        step, val = drawn
        if _shape_features(val) & set(exclude) or _dtype_feature(val.dtype) in exclude:
            continue
        steps.append(step)
        values[step.out] = val
    return Program(inputs, steps, seed)


def sliced(program: Program, result: str) -> Program:
    """The program cut to the steps ``result`` depends on, and the inputs they use."""
    needed, keep = {result}, []
    for s in reversed(program.steps):
        if s.out in needed:
            keep.append(s)
            needed |= set(s.operands)
    keep.reverse()
    cut = next(i for i, s in enumerate(program.steps + [None]) if s is None or s.out == result)
    keep = [s for s in keep if program.steps.index(s) <= cut]
    inputs = {k: v for k, v in program.inputs.items() if k in needed}
    return Program(inputs or dict(list(program.inputs.items())[:1]), keep, program.seed)
