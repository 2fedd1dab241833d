"""Run one program in every mode and compare: numpy reference, eager, ``jit`` on each
CPU backend, ``vmap``, and the derivative modes (grad, jvp, jit∘grad, vmap∘grad,
grad∘grad), the last two checked against central finite differences in f64 when the
program is smooth and its values finite.

Tolerances: exact for integers and bools; floats equal in NaN positions and infinities,
finite values within ``rtol·|want| + rtol·scale``, where ``scale`` is the largest finite
magnitude among the program's intermediate values (cancellation can leave an absolute
error that size) and ``rtol`` is 1e-9 when every float value of the program is f64,
1e-4 when any is f32."""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

import functrans as ft
import functrans.numpy as fnp
from functrans import numpy_warnings
from tests.fuzz import reference
from tests.fuzz.generator import OP_BY_NAME, Program, compile_program, random_values

RTOL = {np.dtype(np.float64): 1e-9, np.dtype(np.float32): 1e-4}
MODES = ("eager", "jit_cpu", "jit_interpret", "vmap", "grad", "jvp", "vmap_grad", "grad_grad",
         "aliasing")


@dataclass
class Failure:
    kind: str       # "mismatch" or "crash"
    mode: str
    detail: str


@dataclass
class Outcome:
    comparisons: int = 0
    failures: list = field(default_factory=list)


def numpy_values(program: Program, inputs: dict | None = None) -> dict:
    """Every value of the program, computed by its numpy rendering step by step."""
    values = dict(inputs if inputs is not None else program.inputs)
    env = {"np": np, "reference": reference}
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for s in program.steps:
            text = OP_BY_NAME[s.op].np.format(**dict(zip("ab", s.operands)), **s.params)
            values[s.out] = np.asarray(eval(text, env, dict(values)))
    return values


def _grad_scale(values) -> float:
    """Derivatives are sums of terms that may cancel to far below their own size; the
    terms are assumed no smaller than 1 (inputs are O(1)), so compare to at least 1."""
    return max(_scale(values), 1.0)


def _scale(values) -> float:
    mags = [np.max(np.abs(v[np.isfinite(v)]), initial=0.0) for v in values
            if v.dtype.kind == "f" and v.size]
    return float(max(mags, default=1.0) or 1.0)


def mismatch(got, want, scale: float = 1.0, rtol: float | None = None, dtype: bool = True):
    """A description of how ``got`` differs from ``want``, or None when they agree."""
    got, want = np.asarray(got), np.asarray(want)
    if dtype and got.dtype != want.dtype:
        return f"dtype {got.dtype} != expected {want.dtype}"
    if got.shape != want.shape:
        return f"shape {got.shape} != expected {want.shape}"
    if want.dtype.kind != "f":
        bad = got != want
    else:
        rtol = RTOL.get(want.dtype, 1e-9) if rtol is None else rtol
        g, w = got.astype(np.float64), want.astype(np.float64)
        finite = np.isfinite(w) & np.isfinite(g)
        with np.errstate(all="ignore"):
            close = np.abs(g - w) <= rtol * (np.abs(w) + scale)
        bad = ~np.where(finite, close, (g == w) | (np.isnan(g) & np.isnan(w)))
    if not np.any(bad):
        return None
    i = tuple(int(k) for k in np.argwhere(bad)[0]) if bad.ndim else ()
    return f"{int(np.sum(bad))} of {bad.size} differ; at {i}: got {got[i]!r}, expected {want[i]!r}"


class Checker:
    """Collects comparisons and failures for one program."""

    def __init__(self, program: Program, exclude=frozenset()):
        self.program, self.exclude = program, set(exclude)
        self.outcome = Outcome()
        self.f = compile_program(program, "ft")
        self.names = list(program.inputs)
        self.args = [fnp.asarray(program.inputs[n]) for n in self.names]
        # an f32 intermediate limits the precision of every later value, f64 or not
        floats = {v.dtype for v in numpy_values(program).values() if v.dtype.kind == "f"}
        self.ref_out = numpy_values(program)[program.result]
        self.rtol = max((RTOL.get(d, 1e-9) for d in floats), default=None)

    def enabled(self, mode: str) -> bool:
        return mode not in self.exclude

    def compare(self, mode: str, thunk, want=None, scale=1.0, rtol=None, dtype=True):
        """Run ``thunk`` (a mode), compare its value with ``want`` unless that is None
        (then only a crash is a failure); record the result and return the value."""
        try:
            with warnings.catch_warnings(record=True) as caught:
                # every warning is shown, as a user would see it: the library's own filter
                # (installed on import) stays in force on top
                warnings.simplefilter("always")
                numpy_warnings.install()
                got = thunk()
        except Exception as e:   # a valid program must not raise in any mode
            self.outcome.failures.append(Failure("crash", mode, f"{type(e).__name__}: {e}"[:400]))
            return None
        leaked = [w for w in caught if issubclass(w.category, RuntimeWarning)]
        if mode == "eager" and leaked and self.enabled("warnings"):
            self.outcome.failures.append(Failure("warning", mode, str(leaked[0].message)))
        if want is None:
            return got
        self.outcome.comparisons += 1
        why = mismatch(got, want, scale, self.rtol if rtol is None else rtol, dtype)
        if why:
            self.outcome.failures.append(Failure("mismatch", mode, why))
        return got

    def values(self):
        ref_all = numpy_values(self.program)
        ref, scale = ref_all[self.program.result], _scale(list(ref_all.values()))
        args = self.args
        self.compare("eager", lambda: self.f(*args), ref, scale)
        for backend in ("cpu", "interpret"):
            if self.enabled(f"jit_{backend}"):
                jf = ft.jit(self.f, backend=backend)
                self.compare(f"jit_{backend}", lambda: jf(*args), ref, scale)
                if self.enabled("aliasing"):
                    self.check_aliasing(f"jit_{backend}", jf, ref, scale)
        if self.enabled("vmap"):
            self.check_vmap(args, ref_all)

    def check_aliasing(self, mode, jf, ref, scale):
        """A compiled result owns its memory: the caller writing into its arguments after
        the call leaves the result as it was, and writing into the result (through numpy)
        leaves the next call's result right."""
        mine = [np.array(self.program.inputs[n], copy=True) for n in self.names]
        first = self.compare(mode, lambda: jf(*mine))
        if first is None:
            return
        kept = np.array(first, copy=True)
        for a in mine:
            a.fill(1)
        self.compare(f"{mode}: result after the arguments were written", lambda: first, kept,
                     scale)
        buf = np.asarray(first)
        if buf.flags.writeable:
            buf.fill(1)
        again = [np.array(self.program.inputs[n], copy=True) for n in self.names]
        self.compare(f"{mode}: next call after its result was written", lambda: jf(*again),
                     ref, scale)

    def batch(self, seed: int):
        """Two examples per input, stacked: the program's inputs and fresh ones."""
        rng = np.random.default_rng(seed)
        second = {n: random_values(rng, v.shape, v.dtype, False)
                  for n, v in self.program.inputs.items()}
        return second, [fnp.asarray(np.stack([self.program.inputs[n], second[n]]))
                        for n in self.names]

    def check_vmap(self, args, ref_all):
        second, stacked = self.batch(self.program.seed + 1)
        ref2_all = numpy_values(self.program, second)
        want = np.stack([ref_all[self.program.result], ref2_all[self.program.result]])
        scale = max(_scale(list(ref_all.values())), _scale(list(ref2_all.values())))
        self.compare("vmap", lambda: ft.vmap(self.f)(*stacked), want, scale)
        for backend in ("cpu", "interpret"):
            if self.enabled(f"jit_{backend}"):
                batched = ft.jit(ft.vmap(self.f), backend=backend)
                self.compare(f"jit_{backend}∘vmap", lambda: batched(*stacked), want, scale)
        if len(self.names) > 1:
            self.check_vmap_unbatched(args, second, stacked, ref_all)

    def check_vmap_unbatched(self, args, second, stacked, ref_all):
        """vmap over the first input only (``in_axes=(0, None, ...)``)."""
        mixed = dict(self.program.inputs)
        mixed[self.names[0]] = second[self.names[0]]
        ref2_all = numpy_values(self.program, mixed)
        want = np.stack([ref_all[self.program.result], ref2_all[self.program.result]])
        scale = max(_scale(list(ref_all.values())), _scale(list(ref2_all.values())))
        in_axes = (0,) + (None,) * (len(args) - 1)
        self.compare("vmap(in_axes=(0, None…))",
                     lambda: ft.vmap(self.f, in_axes=in_axes)(stacked[0], *args[1:]), want, scale)

    def derivatives(self):
        """grad, jvp, jit∘grad, vmap∘grad and grad∘grad with respect to the first
        float input, on the scalar ``sum(f(x) * c)``."""
        ref_all = numpy_values(self.program)
        out = ref_all[self.program.result]
        wrt = next((n for n in self.names if self.program.inputs[n].dtype.kind == "f"), None)
        if wrt is None or out.dtype.kind != "f" or not self.enabled("grad"):
            return
        rng = np.random.default_rng(self.program.seed + 2)
        c = rng.standard_normal(out.shape).astype(out.dtype)
        x = self.program.inputs[wrt]
        t = rng.standard_normal(x.shape).astype(x.dtype)

        def with_x(xv, inputs=None):
            inputs = dict(self.program.inputs if inputs is None else inputs)
            inputs[wrt] = xv
            return [fnp.asarray(inputs[n]) for n in self.names]

        def loss(xv):
            return fnp.sum(self.f(*with_x(xv)) * c)

        g = self.compare("grad", lambda: ft.grad(loss)(x))
        if g is None:
            return
        g = np.asarray(g)
        self.check_compiled_grads(loss, x, g)
        if self.enabled("jvp"):
            self.check_jvp(lambda xv: self.f(*with_x(xv)), x, t, c, g, out, ref_all)
        c2 = rng.standard_normal(x.shape).astype(x.dtype)

        def second(xv):
            return fnp.sum(ft.grad(loss)(xv) * c2)

        gg = self.check_second_order(second, x) if self.enabled("grad_grad") else None
        finite = all(np.all(np.isfinite(v)) for v in ref_all.values() if v.dtype.kind == "f")
        # finite differences need inputs a small step can move: no huge or special values
        moderate = "special" not in self.program.features()
        all_f64 = self.rtol == RTOL[np.dtype(np.float64)]   # an f32 step defeats a small step
        finite = finite and np.all(np.isfinite(g))
        if finite and moderate and all_f64 and self.program.smooth():
            self.check_finite_differences(loss, x, t, g, c, with_x)
            if gg is not None:
                self.check_second_finite_differences(second, x, t, g, gg)

    def check_second_order(self, second, x):
        """grad∘grad eagerly and under jit (cpu), which must agree; the eager value."""
        gg = self.compare("grad∘grad", lambda: ft.grad(second)(x))
        if gg is None:
            return None
        gg = np.asarray(gg)
        if self.enabled("jit_cpu"):
            scale = max(_grad_scale([gg]), self._rounding_scale(ft.grad(second), x, gg))
            self.compare("jit_cpu∘grad∘grad", lambda: ft.jit(ft.grad(second))(x), gg, scale)
        return gg

    def _rounding_scale(self, derivative, x, value):
        """A float32 derivative is only as exact as its own rounding, which fusion,
        reordering and a 1-ulp different math routine change: terms that cancel (x**3 / x**3
        near 0), or cos of a huge intermediate (cos(expm1(x * x)) at x = 5.96: 1 ulp of
        expm1, 2.7e8, turns -sin from -0.99 into 0.30). Four times the eager ``value``'s
        distance from ``derivative`` taken with x in float64, as a ``scale``."""
        if x.dtype != np.float32 or not self.rtol:
            return 0.0
        try:
            exact = np.asarray(derivative(x.astype(np.float64)), np.float64)
        except Exception:       # the program refuses float64: no estimate, no allowance
            return 0.0
        with np.errstate(all="ignore"):
            d = np.abs(np.asarray(value, np.float64) - exact)
        return 4.0 * float(np.max(d[np.isfinite(d)], initial=0.0)) / self.rtol

    def check_compiled_grads(self, loss, x, g):
        gscale = max(_grad_scale([g]), self._rounding_scale(ft.grad(loss), x, g))
        for backend in ("cpu", "interpret"):
            if self.enabled(f"jit_{backend}"):
                self.compare(f"jit_{backend}∘grad",
                             lambda: ft.jit(ft.grad(loss), backend=backend)(x), g, gscale)
        if self.enabled("vmap_grad"):
            rng = np.random.default_rng(self.program.seed + 3)
            x2 = random_values(rng, x.shape, x.dtype, False)
            want = self.compare("grad", lambda: ft.grad(loss)(x2))
            if want is not None:
                want = np.stack([g, np.asarray(want)])
                self.compare("vmap∘grad", lambda: ft.vmap(ft.grad(loss))(np.stack([x, x2])),
                             want, _grad_scale([want]))

    def check_jvp(self, h, x, t, c, g, out, ref_all):
        got = self.compare("jvp", lambda: ft.jvp(h, (x,), (t,)))
        if got is None:
            return
        y, ty = np.asarray(got[0]), np.asarray(got[1])
        if self.enabled("jit_cpu"):
            tangent = ft.jit(lambda xv, tv: ft.jvp(h, (xv,), (tv,))[1])
            exact = self._rounding_scale(
                lambda xv: ft.jvp(h, (xv,), (t.astype(xv.dtype),))[1], x, ty)
            self.compare("jit_cpu∘jvp", lambda: tangent(x, t), ty, max(_grad_scale([ty]), exact))
        self.compare("jvp(primal)", lambda: y, out, _scale(list(ref_all.values())))
        lhs, rhs = np.sum(c * ty, dtype=np.float64), np.sum(g * t, dtype=np.float64)
        # an out-of-range array index: as JAX's default (promise_in_bounds) gather, the value
        # and jvp read the clamped row while grad drops it, so the two need not agree
        oob_rows = any(s.op == "oob_gather" for s in self.program.steps)
        if np.isfinite(lhs) and np.isfinite(rhs) and np.all(np.isfinite(g)) and not oob_rows:
            # derivatives of cancelling terms: error on the scale of the values, not the sum
            size = float(np.sum(np.abs(c * ty), dtype=np.float64) + np.sum(np.abs(g * t))
                         + _scale(list(ref_all.values())))
            rtol = 1e-7 if self.rtol == RTOL[np.dtype(np.float64)] else 1e-3
            self.compare("jvp·c vs grad·t", lambda: np.float64(lhs), np.float64(rhs), size, rtol)

    def check_finite_differences(self, loss, x, t, g, c, with_x, h=1e-6):
        def loss_np(xv):
            vals = numpy_values(self.program, dict(zip(self.names, map(np.asarray, with_x(xv)))))
            return float(np.sum(vals[self.program.result] * c))

        fd = (loss_np(x + h * t) - loss_np(x - h * t)) / (2 * h)
        # truncation error is relative; rounding error is eps·(terms of the loss)/h, and
        # terms that cancel are taken to be at least 1 in size (inputs are O(1))
        terms = max(1.0, float(np.sum(np.abs(c * self.ref_out))))
        size = abs(fd) + float(np.sum(np.abs(g * t))) + 1e-9 * terms / h
        self.compare("grad vs finite differences", lambda: np.float64(np.sum(g * t)),
                     np.float64(fd), size, 1e-4)

    def check_second_finite_differences(self, second, x, t, g, gg, h=1e-6):
        fd2 = (float(second(x + h * t)) - float(second(x - h * t))) / (2 * h)
        terms = max(1.0, float(np.sum(np.abs(g))))
        size = abs(fd2) + float(np.sum(np.abs(gg * t))) + 1e-9 * terms / h
        self.compare("grad∘grad vs finite differences", lambda: np.float64(np.sum(gg * t)),
                     np.float64(fd2), size, 1e-4)


def check_program(program: Program, exclude=frozenset()) -> Outcome:
    """Run ``program`` in every mode not in ``exclude``; comparisons and failures."""
    with warnings.catch_warnings():   # the harness's own arithmetic may overflow
        warnings.simplefilter("ignore")
        checker = Checker(program, exclude)
        checker.values()
        checker.derivatives()
    return checker.outcome


def check_stored_modes(f, x, rec: dict, check) -> None:
    """A seeded case with stored JAX results ``rec`` (``out`` for ``x``, ``out_rev`` for
    ``x[::-1]``) in each mode: eager, jit on the cpu backend, jit on the interpreter (the
    reversed input), and both lanes of a vmap; ``check(got, rec, key, what)`` compares."""
    check(f(x), rec, "out", "eager")
    check(ft.jit(f)(x), rec, "out", "jit cpu")
    check(ft.jit(f, backend="interpret")(x[::-1]), rec, "out_rev", "jit interpret")
    both = ft.vmap(f)(np.stack([x, x[::-1]]))
    check(both[0], rec, "out", "vmap lane 0")
    check(both[1], rec, "out_rev", "vmap lane 1")


def stored_array(got, rec: dict, what: str) -> np.ndarray:
    """``got`` as a numpy array, after checking its dtype and shape against the stored JAX
    record ``rec`` (``dtype``, ``shape``); ``what`` names the mode in the message."""
    got = np.asarray(got)
    assert str(got.dtype) == rec["dtype"], (what, got.dtype, rec["dtype"])
    assert list(got.shape) == rec["shape"], (what, got.shape, rec["shape"])
    return got
