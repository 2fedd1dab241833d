"""Tracing from several threads at once: each thread has its own trace stack and vmap
axis frames, so concurrent grad / vmap / jit / jvp calls give the serial results."""
from __future__ import annotations

import threading

import numpy as np

import functrans as ft
import functrans.numpy as fnp
from functrans import lax


def _loss(w, x):
    return fnp.sum(fnp.sin(x * w) * x)


def _scan_sum(x):
    def body(c, xi):
        return c + fnp.cos(xi) * c, c
    return lax.scan(body, 1.0, x)[0]


def _psum_norm(x):
    return x / lax.psum(x, "i")


# each job is a fresh transformed function (so jit compiles in its thread) and its input
JOBS = [
    lambda k: ft.grad(_loss)(0.5 + k, np.arange(4.0)),
    lambda k: ft.jit(lambda x: fnp.tanh(x) @ x.T)(np.ones((3, 3)) * k),
    lambda k: ft.vmap(ft.grad(lambda x: fnp.sum(x ** 3)))(np.arange(6.0).reshape(3, 2) + k),
    lambda k: ft.vmap(_psum_norm, axis_name="i")(np.arange(1.0, 5.0) + k),
    lambda k: ft.jit(ft.grad(_scan_sum))(np.linspace(0.0, 1.0, 5) * k),
    lambda k: ft.jvp(lambda x: fnp.exp(fnp.sin(x)), (np.arange(3.0) * k,), (np.ones(3),))[1],
    lambda k: ft.hessian(lambda x: fnp.sum(x ** 2 * fnp.cos(x)))(np.arange(3.0) + k),
    lambda k: ft.jit(ft.vmap(lambda c, x: lax.cond(c > 1, fnp.sin, fnp.cos, x)))(
        np.arange(4.0) + k, np.ones(4)),
]


def test_eight_threads_trace_concurrently_like_serial():
    rounds = 6
    serial = [[np.asarray(job(k)) for k in range(rounds)] for job in JOBS]
    results = [[None] * rounds for _ in JOBS]
    errors = []
    start = threading.Barrier(len(JOBS))

    def worker(i):
        try:
            start.wait()
            for k in range(rounds):
                results[i][k] = np.asarray(JOBS[i](k))
        except BaseException as e:      # reported by the main thread
            errors.append((i, e))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(JOBS))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not [t for t in threads if t.is_alive()], "a thread still runs after 300 s"
    assert not errors, errors
    for i in range(len(JOBS)):
        for k in range(rounds):
            np.testing.assert_allclose(results[i][k], serial[i][k], rtol=1e-12, atol=1e-12,
                                       err_msg=f"job {i}, round {k}")


def test_threads_mid_trace_at_the_same_time():
    """Every thread stops inside its traced function until all are there, so the traces
    of all eight are open at once (on one shared stack they would end out of order)."""
    n = 8
    inside = threading.Barrier(n)
    results, errors = [None] * n, []

    def make(k):
        def f(x):
            y = fnp.sin(x) * (k + 1)
            inside.wait(timeout=60)
            return fnp.sum(y * x)
        return f

    def worker(k):
        try:
            x = np.arange(3.0) + k
            transform = (ft.grad, ft.jit, lambda f: ft.vmap(f, in_axes=0))[k % 3]
            arg = x.reshape(3, 1) if k % 3 == 2 else x
            results[k] = np.asarray(transform(make(k))(arg))
        except BaseException as e:
            errors.append((k, e))
            inside.abort()

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not [t for t in threads if t.is_alive()], "a thread still runs after 120 s"
    assert not errors, errors
    for k in range(n):
        x = np.arange(3.0) + k
        if k % 3 == 0:
            want = (k + 1) * (np.cos(x) * x + np.sin(x))
        elif k % 3 == 1:
            want = np.sum((k + 1) * np.sin(x) * x)
        else:
            want = (k + 1) * np.sin(x) * x
        np.testing.assert_allclose(results[k], want, rtol=1e-12, err_msg=f"thread {k}")


def test_trace_stack_is_per_thread():
    seen = {}

    def inner():
        seen["depth"] = ft.tracing.trace_depth()

    def f(x):
        t = threading.Thread(target=inner)
        t.start()
        t.join()
        seen["outer"] = ft.tracing.trace_depth()
        return x * 2

    ft.jit(f)(1.0)
    assert seen == {"depth": 0, "outer": 1}
