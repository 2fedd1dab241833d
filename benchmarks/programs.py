"""Run time of real programs with random draws inside jitted loops (issue 15), functrans
against JAX in the same run, float32 throughout (JAX with x64 off; every draw and constant
says float32, since functrans always has 64-bit types):

1. a VAE training step: an MLP encoder/decoder (256-128-2x8 / 8-128-256, batch 64), a
   reparameterised ``random.normal`` draw per step, 10 SGD steps in a jitted ``fori_loop``;
2. ADVI: mean-field Gaussian variational inference on a Bayesian logistic regression
   (500 points, 10 features, 16 draws per ELBO gradient), 50 steps in ``jit(lax.scan)``;
3. a vmapped log density: ``vmap`` over 1,000 parameter draws of a Student-t regression's
   log density (``scipy.stats`` logpdfs, 200 data points), the draws made in the same jit;
4. a jitted ``fori_loop`` of 200 ``random.normal`` draws (256 floats each, summed);
5. an MLP training step (784-256-10, batch 128, softmax cross-entropy, SGD).

The programs are written once, against a JAX-shaped namespace (``_lib``): functrans
mirrors JAX's API, so the same code runs on both through an import swap. functrans's
``random`` is bit-identical to JAX's default PRNG for the same key, so each setup first
checks that both libraries' results agree to float32 tolerance (a wrong number fails the
workload instead of timing it).

    python -m benchmarks programs --out /tmp/p.md   # the suite's medians
    python -m benchmarks.programs                   # call by call: medians and minima
"""
from __future__ import annotations

import os
import time
import types

import numpy as np

from .harness import Workload

F32 = np.float32


def _lib(name: str):
    """The namespace a program is written against: jax, jnp, random, lax, stats, special, nn."""
    if name == "jax":
        import jax
        jax.config.update("jax_enable_x64", False)
        import jax.nn as nn
        import jax.numpy as jnp
        import jax.scipy.special as special
        import jax.scipy.stats as stats
        from jax import lax, random
    else:
        import functrans as jax
        import functrans.nn as nn
        import functrans.numpy as jnp
        import functrans.scipy.special as special
        import functrans.scipy.stats as stats
        from functrans import lax, random
    return types.SimpleNamespace(jax=jax, jnp=jnp, random=random, lax=lax, stats=stats,
                                 special=special, nn=nn)


def _dense(rng, *sizes):
    return [(rng.standard_normal((a, b)).astype(F32) / F32(np.sqrt(a)), np.zeros(b, F32))
            for a, b in zip(sizes[:-1], sizes[1:])]


# --- 1. VAE -----------------------------------------------------------------------------

def vae_program(L, steps=10, lr=1e-3, latent=8):
    """jit(params, x, key) -> (params after ``steps`` SGD steps, last loss)."""
    jnp = L.jnp

    def mlp(layers, h):
        for w, b in layers[:-1]:
            h = jnp.tanh(h @ w + b)
        w, b = layers[-1]
        return h @ w + b

    def loss(p, x, key):
        enc = mlp(p["enc"], x)
        mu, logvar = enc[:, :latent], enc[:, latent:]
        eps = L.random.normal(key, mu.shape, dtype=jnp.float32)
        z = mu + jnp.exp(F32(0.5) * logvar) * eps
        logits = mlp(p["dec"], z)
        rec = jnp.sum(jnp.logaddexp(F32(0.0), logits) - x * logits, axis=-1)   # Bernoulli NLL
        kl = F32(0.5) * jnp.sum(jnp.exp(logvar) + mu * mu - F32(1.0) - logvar, axis=-1)
        return jnp.mean(rec + kl)

    def run(p, x, key):
        def body(i, carry):
            p, _ = carry
            val, g = L.jax.value_and_grad(loss)(p, x, L.random.fold_in(key, i))
            p = L.jax.tree_util.tree_map(lambda a, b: a - F32(lr) * b, p, g)
            return p, val
        return L.lax.fori_loop(0, steps, body, (p, jnp.zeros((), jnp.float32)))
    return L.jax.jit(run)


def vae_inputs(batch=64, d=256, hidden=128, latent=8):
    rng = np.random.default_rng(0)
    p = {"enc": _dense(rng, d, hidden, 2 * latent), "dec": _dense(rng, latent, hidden, d)}
    x = (rng.random((batch, d)) < 0.3).astype(F32)
    return p, x


# --- 2. ADVI ----------------------------------------------------------------------------

def advi_program(L, steps=50, draws=16, lr=1e-2):
    """jit(X, y, key) -> (mu, log_sigma, ELBO per step), mean-field Gaussian ADVI on a
    Bayesian logistic regression with a N(0, 1) prior."""
    jnp = L.jnp

    def neg_elbo(q, X, y, key):
        mu, log_sigma = q
        eps = L.random.normal(key, (draws, mu.shape[0]), dtype=jnp.float32)
        w = mu + jnp.exp(log_sigma) * eps
        logits = w @ X.T                                              # (draws, N)
        loglik = jnp.sum(L.nn.log_sigmoid(logits * y), axis=-1)       # y in {-1, +1}
        prior = jnp.sum(L.stats.norm.logpdf(w), axis=-1)
        return -(jnp.mean(loglik + prior) + jnp.sum(log_sigma))

    def run(X, y, key):
        d = X.shape[1]
        q0 = (jnp.zeros(d, jnp.float32), jnp.full(d, F32(-1.0)))

        def step(q, k):
            val, g = L.jax.value_and_grad(neg_elbo)(q, X, y, k)
            return (q[0] - F32(lr) * g[0], q[1] - F32(lr) * g[1]), -val
        (mu, ls), elbo = L.lax.scan(step, q0, L.random.split(key, steps))
        return mu, ls, elbo
    return L.jax.jit(run)


def advi_inputs(n=500, d=10):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((n, d)).astype(F32)
    w = rng.standard_normal(d).astype(F32)
    y = np.where(rng.random(n) < 1 / (1 + np.exp(-X @ w)), 1.0, -1.0).astype(F32)
    return X, y


# --- 3. vmapped log density ---------------------------------------------------------------

def logprob_program(L, samples=1000):
    """jit(x, t, key) -> log densities of ``samples`` parameter draws of a Student-t
    regression t ~ StudentT(4, a + b x, exp(s)) with N(0, 1) priors."""
    jnp, st = L.jnp, L.stats

    def logp(theta, x, t):
        a, b, s = theta[0], theta[1], theta[2]
        lik = jnp.sum(st.t.logpdf(t, F32(4.0), a + b * x, jnp.exp(s)))
        return lik + jnp.sum(st.norm.logpdf(theta, F32(0.0), F32(1.0)))

    def run(x, t, key):
        thetas = L.random.normal(key, (samples, 3), dtype=jnp.float32)
        return L.jax.vmap(logp, in_axes=(0, None, None))(thetas, x, t)
    return L.jax.jit(run)


def logprob_inputs(n=200):
    rng = np.random.default_rng(2)
    x = rng.standard_normal(n).astype(F32)
    return x, (0.5 + 1.5 * x + 0.3 * rng.standard_t(4, n)).astype(F32)


# --- 4. 200 draws in a fori_loop ----------------------------------------------------------

def draws_program(L, n=200, size=256):
    """jit(key) -> the sum of ``n`` ``random.normal`` draws of ``size`` floats."""
    jnp = L.jnp

    def run(key):
        def body(i, carry):
            k, acc = carry
            k, sub = L.random.split(k)
            return k, acc + L.random.normal(sub, (size,), dtype=jnp.float32)
        return L.lax.fori_loop(0, n, body, (key, jnp.zeros(size, jnp.float32)))[1]
    return L.jax.jit(run)


# --- 5. MLP step --------------------------------------------------------------------------

def mlp_program(L, lr=1e-2):
    """jit(params, x, labels) -> (params after one SGD step, loss)."""
    jnp = L.jnp

    def loss(p, x, labels):
        (w1, b1), (w2, b2) = p
        logits = jnp.tanh(x @ w1 + b1) @ w2 + b2
        logz = L.special.logsumexp(logits, axis=-1)
        return jnp.mean(logz - jnp.take_along_axis(logits, labels[:, None], axis=-1)[:, 0])

    def step(p, x, labels):
        val, g = L.jax.value_and_grad(loss)(p, x, labels)
        return L.jax.tree_util.tree_map(lambda a, b: a - F32(lr) * b, p, g), val
    return L.jax.jit(step)


def mlp_inputs(batch=128):
    rng = np.random.default_rng(3)
    return (_dense(rng, 784, 256, 10), rng.standard_normal((batch, 784)).astype(F32),
            rng.integers(0, 10, batch).astype(np.int32))


# --- workloads ----------------------------------------------------------------------------

PROGRAMS = {   # name -> (program builder, inputs(L) -> args, rtol)
    "vae": (vae_program, lambda L: (*vae_inputs(), L.random.PRNGKey(0)), 2e-4),
    "advi": (advi_program, lambda L: (*advi_inputs(), L.random.PRNGKey(1)), 2e-4),
    "logprob": (logprob_program, lambda L: (*logprob_inputs(), L.random.PRNGKey(2)), 1e-5),
    "draws": (draws_program, lambda L: (L.random.PRNGKey(3),), 1e-5),
    "mlp": (mlp_program, lambda L: mlp_inputs(), 1e-5),
}


def _leaves(tree):
    if isinstance(tree, (tuple, list)):
        return [x for t in tree for x in _leaves(t)]
    if isinstance(tree, dict):
        return [x for k in sorted(tree) for x in _leaves(tree[k])]
    return [np.asarray(tree)]


def check_agree(name: str, ft_out, jax_out, rtol: float) -> None:
    """Raise AssertionError unless both results have equal shapes, float32 leaves where
    JAX has them, and values within ``rtol`` (relative to each leaf's scale)."""
    a, b = _leaves(ft_out), _leaves(jax_out)
    assert len(a) == len(b), f"{name}: {len(a)} leaves vs JAX's {len(b)}"
    for i, (x, y) in enumerate(zip(a, b)):
        assert x.shape == y.shape and x.dtype == y.dtype, \
            f"{name} leaf {i}: {x.shape} {x.dtype} vs JAX's {y.shape} {y.dtype}"
        scale = max(float(np.max(np.abs(y))), 1e-30)
        err = float(np.max(np.abs(x.astype(np.float64) - y))) / scale
        assert err <= rtol, f"{name} leaf {i}: relative error {err:.2e} > {rtol:.0e}"


def _setup(name):
    def setup():
        build, inputs, rtol = PROGRAMS[name]
        L = _lib("functrans")
        f, args = build(L), inputs(L)
        c = {"functrans cpu": lambda: f(*args)}
        try:
            J = _lib("jax")
        except ImportError:
            return c
        g, jargs = build(J), inputs(J)
        check_agree(name, f(*args), g(*jargs), rtol)
        c["jax"] = lambda: J.jax.block_until_ready(g(*jargs))
        return c
    return setup


def _at_most(k):
    return lambda r: r["functrans cpu"] <= k * r["jax"] if "jax" in r else None


WORKLOADS = [
    Workload("VAE: 10 SGD steps, a normal draw each, in jit(fori_loop) (f32)", _setup("vae"),
             baseline="jax", target="≤ 1× jax", check=_at_most(1.0)),
    Workload("ADVI: 50 ELBO-gradient steps, 16 normal draws each, in jit(scan) (f32)",
             _setup("advi"), baseline="jax", target="≤ 1× jax", check=_at_most(1.0)),
    Workload("vmapped Student-t log density over 1,000 drawn parameters (f32)",
             _setup("logprob"), baseline="jax", target="≤ 1× jax", check=_at_most(1.0)),
    Workload("jit(fori_loop) of 200 random.normal draws (256 f32 each)", _setup("draws"),
             baseline="jax", target="≤ 1× jax", check=_at_most(1.0)),
    Workload("MLP step 784-256-10, batch 128 (f32)", _setup("mlp"),
             baseline="jax", target="≤ 0.6× jax (idle machine)", check=_at_most(0.6)),
]


def main(repeats: int = 40) -> None:
    """``python -m benchmarks.programs``: each workload's candidates alternated call by
    call, ``repeats`` times, printing the median and the minimum of each and both ratios
    to JAX. On a loaded machine the minimum (the least-disturbed call) is the steadier
    figure; the median is what the suite reports."""
    for w in WORKLOADS:
        cands = w.setup()
        for fn in cands.values():
            fn()
        ts = {k: [] for k in cands}
        for _ in range(repeats):
            for k, fn in cands.items():
                t0 = time.perf_counter()
                fn()
                ts[k].append(time.perf_counter() - t0)
        med = {k: float(np.median(v)) for k, v in ts.items()}
        low = {k: min(v) for k, v in ts.items()}
        line = "  ".join(f"{k}: median {med[k] * 1e3:.3f} ms, min {low[k] * 1e3:.3f} ms"
                         for k in cands)
        if "jax" in cands:
            line += (f"  | ratio median {med['functrans cpu'] / med['jax']:.3f}, "
                     f"min {low['functrans cpu'] / low['jax']:.3f}")
        print(f"{w.name}\n  {line}  (load {os.getloadavg()[0]:.1f})", flush=True)


if __name__ == "__main__":
    main()
