"""Random programs with control flow and custom derivatives (scan with pytree carries,
reverse and unroll, length 0/1; fori_loop with static and traced trip counts; while_loop;
cond and switch; custom_jvp/custom_vjp with nondiff_argnums, None cotangents and unused
outputs; checkpoint with policies and static_argnums; stop_gradient; nested jit with
static_argnums and donate_argnums), drawn from a seed and rendered as Python source over a
namespace ``L`` (``L.np``, ``L.lax``, ``L.jit``, ``L.custom_jvp``, ``L.custom_vjp``,
``L.checkpoint``, ``L.policies``, ``L.partial``, ``L.stop_gradient``), so one source runs
under functrans and, to make reference values, under JAX
(tests/data/make_jax_fuzz_transforms_reference.py). Used by test_fuzz_transforms.py."""
from __future__ import annotations

import numpy as np

UN = ["L.np.sin({a})", "L.np.tanh({a})", "({a} * 0.7)", "L.np.exp(-({a}) * ({a}))",
      "L.np.log1p({a} * {a})", "({a} / (1.0 + {a} * {a}))", "(L.np.cos({a}) * 0.5)",
      "L.np.sqrt({a} * {a} + 0.5)", "L.stop_gradient({a})", "(1.0 / (1.0 + L.np.exp(-{a})))",
      "({a} * {a} * 0.3)"]
UN_NS = ["L.np.abs({a})", "L.np.maximum({a}, 0.2)", "L.np.where({a} > 0.0, {a}, 0.1 * {a})",
         "L.np.clip({a}, -0.5, 0.8)"]
BIN = ["({a} + {b})", "({a} * {b})", "({a} - 0.5 * {b})", "(L.np.sin({a}) * L.np.cos({b}))",
       "({a} * L.np.tanh({b}))", "(L.np.tanh({a} + {b}))"]
RED = ["L.np.sum({a})", "L.np.mean({a} * {a})", "L.np.sum(L.np.sin({a}))",
       "L.np.prod(L.np.tanh({a}))", "L.np.cumsum({a})[-1]"]
RED_NS = ["L.np.max({a})", "L.np.sort({a})[0]", "L.np.min({a})"]
POLICIES = ["None", "L.policies.nothing_saveable", "L.policies.everything_saveable",
            "L.policies.dots_saveable", "L.policies.dots_with_no_batch_dims_saveable"]


class Gen:
    def __init__(self, rng, dt):
        self.rng, self.dt = rng, dt
        self.n = 0
        self.smooth = True
        self.fwd_only = False
        self.feats = set()

    def fresh(self, p):
        self.n += 1
        return f"{p}{self.n}"

    def r(self):
        return self.rng.random()

    def pick(self, xs):
        return xs[int(self.rng.integers(len(xs)))]

    # ---- expressions -------------------------------------------------------------
    def leaf(self, kind, pool):
        vs = [k for k, v in pool.items() if v == "v"]
        ss = [k for k, v in pool.items() if v == "s"]
        if kind == "s":
            if ss and (not vs or self.r() < 0.5):
                return self.pick(ss)
            return self.red(self.pick(vs), pool)
        e = self.pick(vs)
        if ss and self.r() < 0.4:
            e = self.pick(BIN).format(a=e, b=self.pick(ss))
        return e

    def red(self, a, pool):
        if self.r() < 0.15:
            self.smooth = False
            return self.pick(RED_NS).format(a=a)
        if self.r() < 0.15:
            vs = [k for k, v in pool.items() if v == "v"]
            return f"L.np.dot({a}, {self.pick(vs)})"
        return self.pick(RED).format(a=a)

    def expr(self, kind, pool, depth=2):
        if depth == 0 or self.r() < 0.3:
            return self.leaf(kind, pool)
        if self.r() < 0.5:
            if self.r() < 0.12:
                self.smooth = False
                t = self.pick(UN_NS)
            else:
                t = self.pick(UN)
                if "stop_gradient" in t:
                    self.smooth = False
            return t.format(a=self.expr(kind, pool, depth - 1))
        return self.pick(BIN).format(a=self.expr(kind, pool, depth - 1),
                                     b=self.expr(kind if self.r() < 0.5 else "s", pool, depth - 1))

    # ---- blocks: append lines (with indent), return (name, kind) ----------------
    def block(self, lines, ind, pool, depth):
        opts = ["elem", "scan_elem", "scan_vec", "fori", "cond", "switch", "cjvp",
                "ckpt", "jit", "scan_elem", "cond", "fori", "scan_len"]
        if self.r() < 0.3:
            opts.append("cvjp")
        if self.allow_traced:
            opts += ["fori_traced", "while"]
        if not any(v == "v" for v in pool.values()):
            opts = ["elem", "fori", "cond", "cjvp", "ckpt", "jit", "scan_len"]
        if depth > 1:
            opts = [o for o in opts if o not in ("scan_vec",)]
        b = self.pick(opts)
        self.feats.add(b)
        return getattr(self, "b_" + b)(lines, ind, pool, depth)

    def inner(self, lines, ind, pool, depth):
        """Optionally a nested block inside a body; extends pool."""
        if depth < 2 and self.r() < 0.35:
            name, kind = self.block(lines, ind, pool, depth + 1)
            pool[name] = kind

    def b_elem(self, lines, ind, pool, depth):
        kind = "v" if any(v == "v" for v in pool.values()) and self.r() < 0.7 else "s"
        name = self.fresh("e")
        lines.append(f"{ind}{name} = {self.expr(kind, pool)}")
        return name, kind

    def b_scan_elem(self, lines, ind, pool, depth):
        vs = [k for k, v in pool.items() if v == "v"]
        xs = self.pick(vs)
        body, c, ys = self.fresh("body"), self.fresh("c"), self.fresh("ys")
        dict_carry = self.r() < 0.5
        rev = self.r() < 0.4
        unroll = self.pick([1, 1, 2, 3, True])
        i2 = ind + "    "
        lines.append(f"{ind}def {body}(c, xe):")
        if dict_carry:
            lines.append(f"{i2}c0, c1 = c['p'], c['q']")
        else:
            lines.append(f"{i2}c0, c1 = c")
        bp = {**pool, "c0": "s", "c1": "s", "xe": "s"}
        self.inner(lines, i2, bp, depth)
        n0 = self.expr("s", bp)
        n1 = self.expr("s", bp)
        y = self.expr("s", bp)
        if dict_carry:
            lines.append(f"{i2}return {{'p': {n0}, 'q': {n1}}}, {y}")
            init = f"{{'p': {self.leaf('s', pool)}, 'q': {self.leaf('s', pool)}}}"
        else:
            lines.append(f"{i2}return ({n0}, {n1}), {y}")
            init = f"({self.leaf('s', pool)}, {self.leaf('s', pool)})"
        lines.append(f"{ind}{c}, {ys} = L.lax.scan({body}, {init}, {xs}, reverse={rev}, "
                     f"unroll={unroll})")
        if self.r() < 0.5:
            return ys, "v"
        out = self.fresh("sc")
        k0 = "['p']" if dict_carry else "[0]"
        lines.append(f"{ind}{out} = {c}{k0} + 0.5 * L.np.sum({ys})")
        return out, "s"

    def b_scan_len(self, lines, ind, pool, depth):
        body, c, ys = self.fresh("body"), self.fresh("c"), self.fresh("ys")
        K = self.pick([0, 1, 2, 3])
        i2 = ind + "    "
        lines.append(f"{ind}def {body}(c, _):")
        bp = {**pool, "c": "s"}
        self.inner(lines, i2, bp, depth)
        lines.append(f"{i2}return {self.expr('s', bp)}, {self.expr('s', bp)}")
        lines.append(f"{ind}{c}, {ys} = L.lax.scan({body}, {self.leaf('s', pool)}, None, "
                     f"length={K}, reverse={self.r() < 0.5})")
        out = self.fresh("sl")
        lines.append(f"{ind}{out} = {c} + L.np.sum({ys})")
        return out, "s"

    def b_scan_vec(self, lines, ind, pool, depth):
        vs = [k for k, v in pool.items() if v == "v"]
        body, c, ys = self.fresh("body"), self.fresh("c"), self.fresh("ys")
        T = self.pick([0, 1, 2, 3])
        if self.r() < 0.5:
            xs = f"L.np.stack([{', '.join(self.pick(vs) for _ in range(T))}])" if T else \
                f"L.np.zeros((0,) + {vs[0]}.shape, {vs[0]}.dtype)"
            xsarg, length = xs, ""
        else:
            xsarg, length = "None", f", length={T}"
        i2 = ind + "    "
        lines.append(f"{ind}def {body}(c, xe):")
        lines.append(f"{i2}cv, cs = c")
        bp = {**pool, "cv": "v", "cs": "s"}
        if xsarg != "None":
            bp["xe"] = "v"
        self.inner(lines, i2, bp, depth)
        lines.append(f"{i2}return ({self.expr('v', bp)}, {self.expr('s', bp)}), {self.expr('v', bp)}")
        lines.append(f"{ind}{c}, {ys} = L.lax.scan({body}, ({self.leaf('v', pool)}, "
                     f"{self.leaf('s', pool)}), {xsarg}{length}, reverse={self.r() < 0.5}, "
                     f"unroll={self.pick([1, 2, True])})")
        out = self.fresh("sv")
        lines.append(f"{ind}{out} = {c}[0] * {c}[1] + L.np.sum({ys}, axis=0)")
        return out, "v"

    def _loop_body(self, lines, ind, pool, depth, name, carry_kinds, idx="i"):
        i2 = ind + "    "
        lines.append(f"{ind}def {name}({idx}, c):")
        names = [f"l{j}" for j in range(len(carry_kinds))]
        lines.append(f"{i2}{', '.join(names)}, = c")
        bp = {**pool, **dict(zip(names, carry_kinds))}
        if idx == "i":
            lines.append(f"{i2}fi = L.lax.convert_element_type(i, DT) * 0.25")
            bp["fi"] = "s"
        self.inner(lines, i2, bp, depth)
        lines.append(f"{i2}return ({', '.join(self.expr(k, bp) for k in carry_kinds)},)")

    def b_fori(self, lines, ind, pool, depth, traced=False):
        kinds = [self.pick(["v", "s"]) if any(v == "v" for v in pool.values()) else "s"
                 for _ in range(int(self.rng.integers(1, 3)))]
        body, c = self.fresh("fb"), self.fresh("fc")
        self._loop_body(lines, ind, pool, depth, body, kinds)
        init = ", ".join(self.leaf(k, pool) for k in kinds)
        if traced:
            lo, hi = self.pick([("0", "k"), ("k", "2 * k"), ("1", "k")])
            extra = ""
        else:
            lo, hi = self.pick([(0, 3), (0, 1), (2, 2), (1, 4), (3, 1)])
            extra = self.pick(["", "", ", unroll=2"])
        lines.append(f"{ind}{c} = L.lax.fori_loop({lo}, {hi}, {body}, ({init},){extra})")
        j = int(self.rng.integers(len(kinds)))
        r = self.fresh("fr")
        lines.append(f"{ind}{r} = {c}[{j}]")
        return r, kinds[j]

    def b_fori_traced(self, lines, ind, pool, depth):
        self.fwd_only = True
        return self.b_fori(lines, ind, pool, depth, traced=True)

    def b_while(self, lines, ind, pool, depth):
        self.fwd_only = True
        kind = "v" if self.r() < 0.6 else "s"
        body, cnd, c = self.fresh("wb"), self.fresh("wc"), self.fresh("w")
        K = self.pick([0, 1, 3])
        i2 = ind + "    "
        lines.append(f"{ind}def {cnd}(c):")
        lim = self.pick(["", f" & (L.np.sum(L.np.abs(c[1])) < 30.0)"])
        lines.append(f"{i2}return (c[0] < {K}){lim}")
        lines.append(f"{ind}def {body}(c):")
        lines.append(f"{i2}it, cv = c")
        bp = {**pool, "cv": kind}
        self.inner(lines, i2, bp, depth)
        lines.append(f"{i2}return (it + 1, {self.expr(kind, bp)})")
        lines.append(f"{ind}_, {c} = L.lax.while_loop({cnd}, {body}, (0, {self.leaf(kind, pool)}))")
        return c, kind

    def b_cond(self, lines, ind, pool, depth):
        kind = "v" if any(v == "v" for v in pool.values()) and self.r() < 0.6 else "s"
        t, f, r = self.fresh("tb"), self.fresh("fb"), self.fresh("cd")
        i2 = ind + "    "
        ops = list(pool)[:3]
        for nm in (t, f):
            lines.append(f"{ind}def {nm}(ops):")
            lines.append(f"{i2}{', '.join(ops)}, = ops")
            bp = {o: pool[o] for o in ops}
            if not any(v == "v" for v in bp.values()) and kind == "v":
                kind = "s"
            self.inner(lines, i2, bp, depth)
            lines.append(f"{i2}return {self.expr(kind, bp)}")
        pred = f"{self.leaf('s', pool)} > {self.pick(['0.0', '0.3', '-0.2'])}"
        lines.append(f"{ind}{r} = L.lax.cond({pred}, {t}, {f}, ({', '.join(ops)},))")
        return r, kind

    def b_switch(self, lines, ind, pool, depth):
        kind = "v" if self.r() < 0.6 else "s"
        i2 = ind + "    "
        names = []
        for _ in range(int(self.rng.integers(1, 4))):
            nm = self.fresh("br")
            names.append(nm)
            lines.append(f"{ind}def {nm}(u, w):")
            bp = {"u": "v", "w": "s"}
            self.inner(lines, i2, bp, depth)
            lines.append(f"{i2}return {self.expr(kind, bp)}")
        r = self.fresh("sw")
        idx = (f"L.lax.convert_element_type(L.np.clip(L.np.floor({self.leaf('s', pool)} * 2.0), "
               f"-2.0, 4.0), np.int32)")
        lines.append(f"{ind}{r} = L.lax.switch({idx}, [{', '.join(names)}], "
                     f"{self.leaf('v', pool)}, {self.leaf('s', pool)})")
        return r, kind

    def b_cjvp(self, lines, ind, pool, depth):
        nm, r = self.fresh("cj"), self.fresh("cjo")
        i2 = ind + "    "
        u_kind = "v" if any(v == "v" for v in pool.values()) else "s"
        v_kind = self.pick(["s", u_kind])
        variant = self.pick(["sinmul", "softplus", "ratio", "power"])
        if variant == "power":
            m = self.pick([1, 2, 3])
            lines.append(f"{ind}@L.partial(L.custom_jvp, nondiff_argnums=(0,))")
            lines.append(f"{ind}def {nm}(m, u, v):")
            lines.append(f"{i2}return u ** m * v")
            lines.append(f"{ind}@{nm}.defjvp")
            lines.append(f"{ind}def {nm}_jvp(m, primals, tangents):")
            lines.append(f"{i2}u, v = primals")
            lines.append(f"{i2}du, dv = tangents")
            lines.append(f"{i2}return {nm}(m, u, v), m * u ** (m - 1) * v * du + u ** m * dv")
            call = f"{nm}({m}, {self.expr(u_kind, pool, 1)}, {self.expr(v_kind, pool, 1)})"
        else:
            prim, tan = {
                "sinmul": ("L.np.sin(u) * v", "L.np.cos(u) * v * du + L.np.sin(u) * dv"),
                "softplus": ("L.np.log1p(L.np.exp(u)) + v", "du / (1.0 + L.np.exp(-u)) + dv"),
                "ratio": ("u * v / (1.0 + v * v)",
                          "dv * u * (1.0 - v * v) / (1.0 + v * v) ** 2 + du * v / (1.0 + v * v)"),
            }[variant]
            lines.append(f"{ind}@L.custom_jvp")
            lines.append(f"{ind}def {nm}(u, v):")
            lines.append(f"{i2}return {prim}")
            lines.append(f"{ind}@{nm}.defjvp")
            lines.append(f"{ind}def {nm}_jvp(primals, tangents):")
            lines.append(f"{i2}u, v = primals")
            lines.append(f"{i2}du, dv = tangents")
            lines.append(f"{i2}return {nm}(u, v), {tan}")
            sg = self.r() >= 0.7
            if sg:
                self.smooth = False
            vexpr = self.expr(v_kind, pool, 1) if not sg else f"L.stop_gradient({self.leaf(v_kind, pool)})"
            call = f"{nm}({self.expr(u_kind, pool, 1)}, {vexpr})"
        lines.append(f"{ind}{r} = {call}")
        return r, u_kind

    def b_cvjp(self, lines, ind, pool, depth):
        nm, r = self.fresh("cv"), self.fresh("cvo")
        i2 = ind + "    "
        u_kind = "v" if any(v == "v" for v in pool.values()) else "s"
        v_kind = self.pick(["s", u_kind])
        red = (lambda e: f"L.np.sum({e})") if (v_kind == "s" and u_kind == "v") else (lambda e: e)
        variant = self.pick(["plain", "none", "multi", "nondiff"])
        pre = "m, " if variant == "nondiff" else ""
        if variant == "nondiff":
            lines.append(f"{ind}@L.partial(L.custom_vjp, nondiff_argnums=(0,))")
        else:
            lines.append(f"{ind}@L.custom_vjp")
        lines.append(f"{ind}def {nm}({pre}u, v):")
        sc = "m * " if variant == "nondiff" else ""
        if variant == "multi":
            lines.append(f"{i2}return L.np.sin(u) * v, u * u")
        else:
            lines.append(f"{i2}return {sc}L.np.sin(u) * v")
        lines.append(f"{ind}def {nm}_fwd({pre}u, v):")
        lines.append(f"{i2}return {nm}({pre}u, v), (L.np.cos(u), L.np.sin(u), v, u)")
        lines.append(f"{ind}def {nm}_bwd({pre}res, g):")
        lines.append(f"{i2}cu, su, v, u = res")
        if variant == "multi":
            lines.append(f"{i2}g0, g1 = g")
            lines.append(f"{i2}return (g0 * cu * v + 2.0 * g1 * u, {red('g0 * su')})")
        elif variant == "none":
            lines.append(f"{i2}return (g * cu * v, None)")
        else:
            lines.append(f"{i2}return ({sc}g * cu * v, {red(sc + 'g * su')})")
        lines.append(f"{ind}{nm}.defvjp({nm}_fwd, {nm}_bwd)")
        args = f"{self.expr(u_kind, pool, 1)}, {self.expr(v_kind, pool, 1)}"
        if variant == "nondiff":
            lines.append(f"{ind}{r} = {nm}({self.pick([0.5, 2.0])}, {args})")
        elif variant == "multi":
            which = self.pick(["[0]", "[1]", "both"])
            if which == "both":
                lines.append(f"{ind}{r}t = {nm}({args})")
                lines.append(f"{ind}{r} = {r}t[0] + {r}t[1]")
            else:
                lines.append(f"{ind}{r} = {nm}({args}){which}")
        else:
            lines.append(f"{ind}{r} = {nm}({args})")
        if variant == "none":
            self.smooth = False
        return r, u_kind

    def b_ckpt(self, lines, ind, pool, depth):
        nm, r = self.fresh("ck"), self.fresh("cko")
        i2 = ind + "    "
        kind = "v" if any(v == "v" for v in pool.values()) and self.r() < 0.7 else "s"
        ops = list(pool)[-2:]
        static = self.r() < 0.3
        lines.append(f"{ind}def {nm}({', '.join(ops)}{', m' if static else ''}):")
        bp = {o: pool[o] for o in ops}
        if kind == "v" and not any(v == "v" for v in bp.values()):
            kind = "s"
        self.inner(lines, i2, bp, depth)
        e = self.expr(kind, bp)
        vs = [o for o in ops if bp[o] == "v"]
        if vs and self.r() < 0.5:
            e = f"{e} * L.np.dot({vs[0]}, {vs[-1]})"
        if static:
            e = f"{e} * m"
        lines.append(f"{i2}return {e}")
        pol = self.pick(POLICIES)
        kw = f"policy={pol}" + (", static_argnums=(2,)" if static and len(ops) == 2 else "")
        if static and len(ops) != 2:
            kw += f", static_argnums=({len(ops)},)"
        lines.append(f"{ind}{r} = L.checkpoint({nm}, {kw}, prevent_cse={self.r() < 0.7})"
                     f"({', '.join(ops)}{', 2' if static else ''})")
        return r, kind

    def b_jit(self, lines, ind, pool, depth):
        nm, r = self.fresh("jf"), self.fresh("jo")
        i2 = ind + "    "
        kind = "v" if any(v == "v" for v in pool.values()) and self.r() < 0.7 else "s"
        src = self.leaf(kind, pool)
        mode = self.pick(["static", "donate", "plain"])
        lines.append(f"{ind}def {nm}(u, m):")
        bp = {"u": kind}
        self.inner(lines, i2, bp, depth)
        lines.append(f"{i2}for _ in range(m):")
        lines.append(f"{i2}    u = {self.expr(kind, bp, 1)}")
        lines.append(f"{i2}return u")
        m = self.pick([0, 1, 2])
        if mode == "static":
            lines.append(f"{ind}{r} = L.jit({nm}, static_argnums=(1,))({src}, {m})")
        elif mode == "donate":
            lines.append(f"{ind}{r} = L.jit(L.partial({nm}, m={m}), donate_argnums=(0,))({src} * 1.0)")
        else:
            lines.append(f"{ind}{r} = L.jit(L.partial({nm}, m={m}))({src})")
        return r, kind


def make_program(rng, traced=None):
    dt = np.float64 if rng.random() < 0.6 else np.float32
    g = Gen(rng, dt)
    g.allow_traced = rng.random() < 0.25 if traced is None else traced
    n = int(rng.integers(1, 5))
    lines = ["def f(L, x, y, k):"]
    pool = {"x": "v", "y": "v"}
    nblocks = int(rng.integers(2, 5))
    ind = "    "
    for _ in range(nblocks):
        name, kind = g.block(lines, ind, pool, 0)
        if kind is None:     # fori result: kind of the chosen carry: resolve at runtime
            nm = g.fresh("fr")
            lines.append(f"{ind}{nm} = {name}")
            kind = "?"
            name = nm
        pool[name] = kind
    # resolve '?' kinds by shape at generation time is impossible; treat as 'v' via broadcast
    outs = [k for k in list(pool)[2:]]
    outs = outs[-int(rng.integers(1, 3)):]
    fix = []
    for o in outs:
        if pool[o] == "?":
            fix.append(f"(x * 0.0 + {o})")
        else:
            fix.append(o)
    lines.append(f"{ind}return ({', '.join(fix)},)" if rng.random() < 0.5 else
                 f"{ind}return {{{', '.join(repr('o%d' % j) + ': ' + e for j, e in enumerate(fix))}}}")
    src = "\n".join(lines)
    return src, dt, n, g


def leaves(o) -> list:
    """The leaves of a program's output (dicts by sorted key, tuples and lists in order),
    flattened the same way for the JAX reference and the functrans run.

    >>> leaves({"b": (1, [2]), "a": 3})
    [3, 1, 2]
    """
    if isinstance(o, dict):
        return [v for k in sorted(o) for v in leaves(o[k])]
    if isinstance(o, (tuple, list)):
        return [v for e in o for v in leaves(e)]
    return [o]


def program(seed: int, traced: bool | None = None) -> dict:
    """The program of ``seed``: its source (``def f(L, x, y, k)``), float dtype, inputs
    (x, y float vectors, k an int32 trip count), whether it is only forward-differentiable
    (a while_loop or traced trip count) and smooth (finite differences apply).

    >>> p = program(7000)
    >>> p["src"].startswith("def f(L, x, y, k):"), p["x"].shape == p["y"].shape
    (True, True)
    """
    rng = np.random.default_rng(seed)
    src, dt, n, g = make_program(rng, traced)
    x = rng.standard_normal(n).astype(dt)
    y = rng.standard_normal(n).astype(dt)
    k = np.int32(rng.integers(0, 4))
    return {"src": src, "dtype": np.dtype(dt).name, "x": x, "y": y, "k": k,
            "fwd_only": g.fwd_only, "smooth": g.smooth, "features": sorted(g.feats)}
