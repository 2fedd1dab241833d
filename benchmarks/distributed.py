"""Collective latency and bandwidth under MPI: ``mpiexec -n 2 python -m benchmarks.distributed``.

For a psum of 8 bytes (one float64) and of 8 MiB (2**20 float64), the median time of:

- ``mpi4py Allreduce``: the MPI call itself on preallocated numpy buffers (the floor);
- ``native MPI_Allreduce (llvmlite)``: the library's MPI_Allreduce called from
  llvmlite-compiled code through one ctypes call (``benchmarks/mpi_native.py``);
- ``compiled psum, host step``: a jitted psum called with the mesh's axis names bound
  (``sharding.bound_mesh``): the compiled program's call plus its host step (buffer views,
  the MPI call through mpi4py, the result);
- ``jit(shard_map(psum))``: a whole call from Python: with ``native_collectives(False)``
  the outer compiled program runs the shard_map as a host step (this process's block, the
  compiled body with its psum a host step, the result); by default the body is inlined
  into the outer program, its psum calling MPI_Allreduce natively
  (``functrans.primitives.collectives_native``): one native call from Python.

Rank 0 prints one table row per (size, candidate): median microseconds and the ratio to
Allreduce, and writes them as their own section of BENCHMARKS.md (``--no-write``: print
only). Issue 17's targets: the compiled psum within 1.2x of Allreduce at 8 MiB and within
1.5x at 8 bytes.

``mpiexec -n 2 python -m benchmarks.distributed --alltoall`` times an all_to_all of an
8 MiB float32 block per process the same way (``alltoall_table``): jitted shard_maps whose
all_to_all reads its operand in place (split 0), packs it once (split 1) and / or has a
derived datatype place the chunks (concat 1), the host step, against mpi4py's
``Alltoall`` on data already member-major (no layout work at all: the floor), and writes
its own section.

``python -m benchmarks.distributed --strategies`` (no mpiexec: it launches ``mpiexec -n N``
itself) runs one training step of every strategy of ``examples/parallel/``
(``benchmarks/distributed_strategies.py``) on 1, 2 and 4 processes, and the data-parallel
throughput case (MLP 784-512-256-10, f32, global batch 4096: 2 processes of one thread each
vs 1 process of one thread). It prints, and writes as its own section of BENCHMARKS.md
(``--no-write``: print only), per strategy and process count: the step time (median over
steps, slowest rank), process 0's bytes sent per step (``ft.distributed.comm_stats``: the
standard algorithms' volumes on the exact payloads of the calls made, not a capture of
MPI's wire traffic; the assembly of split outputs apart), the textbook figure and whether
they agree within 5% (FAIL rows say why not). An alpha-beta model, fitted to this run's
2- and 4-process Allreduce times, extrapolates each strategy's communication time per step
to 8...1024 processes: a model, not a measurement.
"""
from __future__ import annotations

import time

import numpy as np


def _candidates(ft, lax, mesh, comm, MPI, x, out):
    """{name: zero-argument callable} of the psum candidates on buffer ``x``, each checked."""
    from functrans.compiler import compile_closed
    from functrans.primitives.collectives_native import native_body, native_collectives
    from functrans.sharding import P, bound_mesh
    from benchmarks.mpi_native import check_native, native_allreduce
    n = comm.Get_size()
    psum_c = ft.jit(lambda v: lax.psum(v, "i"))

    def host_step():         # the compiled psum as a body runs it: the mesh's names bound
        with bound_mesh(mesh):
            return psum_c(x)

    body = ft.jit(ft.shard_map(lambda v: lax.psum(v, "i"), mesh, in_specs=P(),
                               out_specs=P(), check_rep=False))
    body_host = ft.jit(ft.shard_map(lambda v: lax.psum(v, "i"), mesh, in_specs=P(),
                                    out_specs=P(), check_rep=False))

    def host_body():          # the same body with the native rewrite off (two flag flips)
        before = native_collectives(False)
        try:
            return body_host(x)
        finally:
            native_collectives(before)
    # the program a shard_map body compiles to: psum rewritten to a native MPI_Allreduce
    with bound_mesh(mesh):
        closed = ft.make_jaxpr(lambda v: lax.psum(v, "i"))(x)
    rewritten = native_body(closed, mesh)
    if rewritten is not None:
        prog, handles = rewritten
        exe = compile_closed(prog, "cpu", name="psum body")
    else:                     # one process: nothing to call
        exe, handles = compile_closed(closed, "cpu"), ()
    run = exe.fast_runner() if hasattr(exe, "fast_runner") else exe   # as the body runs
    native = native_allreduce(comm, MPI.DOUBLE, MPI.SUM)
    check_native(native, comm, x.size)
    xp, op = x.ctypes.data, out.ctypes.data
    cands = {"mpi4py Allreduce": lambda: comm.Allreduce(x, out, op=MPI.SUM),
             "native MPI_Allreduce (llvmlite), one ctypes call": lambda: native(xp, op,
                                                                                x.size, 1),
             "compiled psum, host step": host_step,
             "compiled psum, native MPI_Allreduce": lambda: run(x, *handles),
             "jit(shard_map(psum)), host step": host_body,
             "jit(shard_map(psum)), body inlined, native MPI_Allreduce": lambda: body(x)}
    for name, f in cands.items():
        r = f()
        if name not in ("mpi4py Allreduce", "native MPI_Allreduce (llvmlite), one ctypes call"):
            assert np.allclose(np.asarray(r), n * x), name     # the values agree with MPI's
    return cands


PSUM_SECTION = "Collectives in compiled programs: psum against mpi4py's Allreduce (issue 17)"


def main(write=True):
    """Each candidate timed call by call, the candidates interleaved in rounds (the machine
    is shared: a slow spell hits them all); medians, the slowest rank's."""
    import datetime
    import os
    import functrans as ft
    from functrans import lax
    from functrans.sharding import Mesh
    from mpi4py import MPI
    ft.distributed.initialize()
    comm = MPI.COMM_WORLD
    n = ft.process_count()
    mesh = Mesh((n,), ("i",))
    rows = []
    for label, size, reps in (("8 B", 1, 400), ("8 MiB", 2 ** 20, 8)):
        x = np.random.default_rng(0).normal(size=size)
        out = np.empty_like(x)
        cands = _candidates(ft, lax, mesh, comm, MPI, x, out)
        ts = {k: [] for k in cands}
        for _ in range(5):                       # rounds
            for k, f in cands.items():
                comm.Barrier()
                for _ in range(reps):
                    t0 = time.perf_counter()
                    f()
                    ts[k].append(time.perf_counter() - t0)
        med = {k: comm.allreduce(1e6 * float(np.median(v)), op=MPI.MAX) for k, v in ts.items()}
        base = med["mpi4py Allreduce"]
        rows += [(label, k, t, t / base) for k, t in med.items()]
    if ft.process_index() != 0:
        return
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    lines = [f"Written by `mpiexec -n {n} python -m benchmarks.distributed` on "
             f"{datetime.date.today().isoformat()} (load average {load} on a machine shared "
             f"with other work: noisy; the ratios are within one run, the candidates "
             f"interleaved in rounds): median time of a psum over {n} processes, the "
             f"slowest rank's, against mpi4py's `Allreduce` on the same buffers. Targets: "
             f"the compiled psum <= 1.2x at 8 MiB and <= 1.5x at 8 bytes.", "",
             "| size | candidate | time (us) | vs Allreduce |", "|---|---|---:|---:|"]
    lines += [f"| {label} | {cand} | {t:.1f} | {r:.2f}x |" for label, cand, t, r in rows]
    print("\n".join(lines))
    if write:
        path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                            "BENCHMARKS.md")
        write_section(path, PSUM_SECTION, lines)
        print(f"wrote the section {PSUM_SECTION!r} of {path}")


ALLTOALL_SECTION = ("Collectives in compiled programs: all_to_all against mpi4py's Alltoall "
                    "(issue 17)")


def _alltoall_candidates(ft, lax, mesh, comm, x, rows, cols):
    """{name: zero-argument callable}: the all_to_all candidates on this process's block,
    each checked against the host step (bit for bit) first."""
    from functrans.primitives.collectives_native import native_collectives
    from functrans.sharding import P
    n, me = comm.Get_size(), comm.Get_rank()
    k = cols // n

    def sm(s, c):
        return ft.jit(ft.shard_map(lambda b: lax.all_to_all(b, "i", s, c, tiled=True), mesh,
                                   in_specs=P("i"), out_specs=P(), check_rep=False))
    send = np.ascontiguousarray(x[me * rows:(me + 1) * rows].reshape(rows, n, k)
                                .transpose(1, 0, 2))
    recv = np.empty_like(send)
    cands = {"mpi4py Alltoall, data already member-major": lambda: comm.Alltoall(send, recv)}
    for s, c, what in ((0, 0, "read in place"), (1, 0, "packed once"),
                       (0, 1, "derived receive type"), (1, 1, "packed once, derived receive")):
        f = sm(s, c)
        before = native_collectives(False)
        host = np.asarray(sm(s, c)(x)).tobytes()
        native_collectives(before)
        if np.asarray(f(x)).tobytes() != host:
            raise AssertionError(f"all_to_all split {s} concat {c}: native != host step")
        cands[f"jit(shard_map(all_to_all)) split {s} concat {c}: {what}"] = \
            lambda f=f: f(x)
    host_f = sm(1, 0)

    def host_step():
        before = native_collectives(False)
        host_f(x)
        native_collectives(before)
    cands["jit(shard_map(all_to_all)) split 1 concat 0, host step"] = host_step
    return cands


def alltoall_table(write=True, rounds=40):
    """Under mpiexec: the all_to_all candidates timed call by call, interleaved in rounds
    (alternating order), medians and minima of the slowest rank; rank 0 prints and writes
    the section."""
    import datetime
    import os
    import functrans as ft
    from functrans import lax
    from functrans.sharding import Mesh
    from mpi4py import MPI
    ft.distributed.initialize()
    comm = MPI.COMM_WORLD
    n = ft.process_count()
    rows, cols = 1024, 2048                   # float32: 8 MiB per process
    x = np.random.default_rng(0).normal(size=(n * rows, cols)).astype(np.float32)
    cands = _alltoall_candidates(ft, lax, Mesh((n,), ("i",)), comm, x, rows, cols)
    ts = {k: [] for k in cands}
    for r in range(rounds):
        for k in (list(cands) if r % 2 == 0 else list(cands)[::-1]):
            comm.Barrier()
            t0 = time.perf_counter()
            cands[k]()
            ts[k].append(comm.allreduce(time.perf_counter() - t0, op=MPI.MAX))
    if ft.process_index() != 0:
        return
    base = float(np.median(ts["mpi4py Alltoall, data already member-major"]))
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    lines = [f"Written by `mpiexec -n {n} python -m benchmarks.distributed --alltoall` on "
             f"{datetime.date.today().isoformat()} (load average {load} on a machine shared "
             f"with other work: noisy; {rounds} rounds, the candidates interleaved in "
             f"alternating order): time of an all_to_all of a float32 {rows} x {cols} block "
             f"(8 MiB) per process over {n} processes, the slowest rank's, median and "
             f"fastest call, against mpi4py's `Alltoall` on data already member-major.", "",
             "| candidate | median (us) | fastest (us) | median vs Alltoall |",
             "|---|---:|---:|---:|"]
    lines += [f"| {k} | {1e6 * np.median(v):.0f} | {1e6 * min(v):.0f} | "
              f"{np.median(v) / base:.2f}x |" for k, v in ts.items()]
    print("\n".join(lines))
    if write:
        path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                            "BENCHMARKS.md")
        write_section(path, ALLTOALL_SECTION, lines)
        print(f"wrote the section {ALLTOALL_SECTION!r} of {path}")


# --------------------------------------------------------------------------- strategies

SECTION = "Many processes: strategies, bytes per step and an alpha-beta model (issue 17)"
FIT_SIZES = ((1, 300), (8192, 100), (131072, 30), (1048576, 10))   # float64 counts, reps
MODEL_NS = (8, 16, 64, 256, 1024)
STEP_REPS = 9


def _timed_steps(step, args, reps, stat=np.median):
    """``stat`` (median) of a call's seconds, each started together (barrier); the slowest
    rank's."""
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    ts = []
    for _ in range(reps):
        comm.Barrier()
        t0 = time.perf_counter()
        step(*args)
        ts.append(time.perf_counter() - t0)
    return comm.allreduce(float(stat(ts)), op=MPI.MAX)


def strategies_worker():
    """Under mpiexec: one JSON line per strategy (rank 0), then the Allreduce timings."""
    import json
    import functrans as ft
    from mpi4py import MPI
    from benchmarks.distributed_strategies import build, strategies
    ft.distributed.initialize()
    n, comm = ft.process_count(), MPI.COMM_WORLD
    for name in strategies(n):
        step, args = build(name, n)
        step(*args)                                    # compile
        stats = ft.distributed.measure_comm(lambda: step(*args))[1]
        t = _timed_steps(step, args, STEP_REPS)
        if ft.process_index() == 0:
            print("S " + json.dumps({"name": name, "n": n, "step_s": t, "stats": stats}),
                  flush=True)
    if n > 1:
        for size, reps in FIT_SIZES:
            a, b = np.ones(size), np.empty(size)
            comm.Allreduce(a, b)
            # the fastest call: the model's alpha and beta describe the transport, not
            # the other work sharing the cores (under load the median is mostly waiting)
            t = _timed_steps(lambda: comm.Allreduce(a, b), (), reps, np.min)
            if ft.process_index() == 0:
                print("A " + json.dumps({"n": n, "bytes": size * 8, "s": t}), flush=True)


def throughput_worker():
    """Under mpiexec -n 1 or 2 (one thread each): the data-parallel MLP step's median."""
    import json
    import functrans as ft
    import functrans.numpy as fnp
    from functrans import lax
    from functrans.sharding import Mesh, P
    from functrans.tree_util import tree_map
    ft.distributed.initialize()
    n = ft.process_count()
    r = np.random.default_rng(0)
    dims = (784, 512, 256, 10)
    p = [((r.normal(size=(a, b)) / np.sqrt(a)).astype(np.float32), np.zeros(b, np.float32))
         for a, b in zip(dims[:-1], dims[1:])]
    x = r.normal(size=(4096, 784)).astype(np.float32)
    y = r.normal(size=(4096, 10)).astype(np.float32)

    def loss(p, x, y):
        h = x
        for i, (w, b) in enumerate(p):
            h = h @ w + b
            h = fnp.tanh(h) if i < len(p) - 1 else h
        return fnp.mean((h - y) ** 2)

    def local_step(p, x, y):
        g = ft.grad(loss)(p, x, y)
        if n > 1:
            g = tree_map(lambda t: lax.pmean(t, "data"), g)     # the gradient all-reduce
        return tree_map(lambda a, b: a - np.float32(0.01) * b, p, g)

    # the body compiled too (a shard_map body runs op by op unless it is jitted)
    step = ft.jit(local_step if n == 1 else ft.shard_map(
        ft.jit(local_step), Mesh((n,), ("data",)), in_specs=(P(), P("data"), P("data")),
        out_specs=P(), check_rep=False))   # per-process gradients, pmean'd (check_vma=False)
    step(p, x, y)
    t = _timed_steps(step, (p, x, y), 15)
    if ft.process_index() == 0:
        print("T " + json.dumps({"n": n, "step_s": t}), flush=True)


def _launch(n, flag, extra_env=None):
    import json
    import os
    import subprocess
    import sys
    exe = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, OMP_NUM_THREADS="1",
               PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""),
               **(extra_env or {}))
    out = subprocess.run([exe, "-n", str(n), sys.executable, "-m", "benchmarks.distributed",
                          flag], capture_output=True, text=True, env=env, cwd=root,
                         timeout=900)
    if out.returncode:
        raise RuntimeError(f"mpiexec -n {n} {flag} failed:\n{out.stderr[-3000:]}")
    return [(line[0], json.loads(line[2:])) for line in out.stdout.splitlines()
            if line[:2] in ("S ", "A ", "T ")]


def _sent(stats, assembly):
    return sum(v["bytes_sent"] for k, v in stats.items()
               if (k == "shard_map_output") == assembly)


def _strategy_rows(results):
    """The measured table: one row per (strategy, N)."""
    from benchmarks.distributed_strategies import WHY, textbook
    lines = ["| strategy | N | step (median, ms) | bytes sent / step / process | "
             "output assembly | textbook | measured / textbook | check |",
             "|---|---:|---:|---:|---:|---:|---:|---|"]
    for r in results:
        sent, asm = _sent(r["stats"], False), _sent(r["stats"], True)
        book, how = textbook(r["name"], r["n"])
        if book:
            ratio = sent / book
            ok = abs(ratio - 1) <= 0.05
            check = "ok" if ok else f"FAIL: {WHY.get(r['name'], 'unexplained')}"
            cell = f"{ratio:.3f}"
        else:
            cell, check = "-", ("ok (nothing to send)" if sent == 0 else "FAIL: sent bytes "
                                "on one process")
        lines.append(f"| {r['name']} | {r['n']} | {r['step_s'] * 1e3:.2f} | {sent} | {asm} | "
                     f"{book:.0f} ({how}) | {cell} | {check} |")
    return lines


def fit_alpha_beta(timings) -> tuple:
    """(alpha s, beta s/byte) of t = 2(N-1) alpha + 2(N-1)/N S beta (ring all-reduce), by
    least squares of the relative error over {(N, S bytes): seconds} (so that the 8-byte
    timings set alpha and the MiB ones beta, rather than the largest time setting both).

    >>> a, b = fit_alpha_beta({(2, 8): 2e-6 + 8e-9, (4, 8): 6e-6 + 12e-9,
    ...                        (2, 800): 2e-6 + 8e-7, (4, 800): 6e-6 + 12e-7})
    >>> round(a * 1e6, 6), round(b * 1e9, 6)
    (1.0, 1.0)
    """
    rows = [(2 * (n - 1), 2 * (n - 1) / n * s, t) for (n, s), t in sorted(timings.items())]
    A = np.array([[a / t, b / t] for a, b, t in rows])
    alpha, beta = np.linalg.lstsq(A, np.ones(len(rows)), rcond=None)[0]
    return float(alpha), float(beta)


def _model_ops(name, n):
    """[(messages, bytes)] on the critical path of one step at n processes (textbook)."""
    from benchmarks.distributed_strategies import (B, F4, HEADS, M, O, PB, PD, TB, TD, TT,
                                                   mlp_param_bytes)
    del HEADS
    s = mlp_param_bytes()

    def ar(nb, g):
        return (2 * (g - 1), 2 * (g - 1) / g * nb)

    def half(nb, g):                        # reduce-scatter or all-gather
        return (g - 1, (g - 1) / g * nb)
    if name == "data parallel":
        return [ar(s, n)]
    if name in ("ZeRO-1", "ZeRO-2"):
        return [half(s, n)] * 2
    if name == "ZeRO-3":
        return [half(s, n)] * 3
    if name == "tensor parallel (MLP)":
        return [ar(B * O * F4, n)] * 2
    if name == "tensor parallel (transformer block)":
        return [ar(TB * TT * TD * F4, n)] * 4
    if name == "DP x TP (2 x 2 mesh)":           # TP over 2, DP over n / 2
        return [ar(B // (n // 2) * O * F4, 2)] * 2 + [ar(s // 2, n // 2)]
    if name == "pipeline (GPipe)":               # n stages; a tick per micro-batch step
        return [(1, PB // M * PD * F4)] * (2 * (M + n - 1))
    raise KeyError(name)


def _model_rows(alpha, beta, names):
    lines = ["| strategy (MODEL) | " + " | ".join(f"N={n}" for n in MODEL_NS) + " |",
             "|---|" + "---:|" * len(MODEL_NS)]
    for name in names:
        cells = []
        for n in MODEL_NS:
            t = sum(m * alpha + b * beta for m, b in _model_ops(name, n))
            cells.append(f"{t * 1e3:.3f}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def write_section(path, title, lines):
    """Replace the section ``## title`` of the Markdown file (up to the next ``## ``) with
    ``lines``, or append it; the other sections are left as they are."""
    import os
    text = open(path).read() if os.path.exists(path) else ""
    head = f"## {title}"
    body = head + "\n\n" + "\n".join(lines).rstrip() + "\n"
    if head in text:
        a = text.index(head)
        b = text.find("\n## ", a + len(head))
        text = text[:a] + body + ("\n" + text[b + 1:] if b >= 0 else "")
    else:
        text = text.rstrip() + "\n\n" + body
    with open(path, "w") as f:
        f.write(text)


def strategies_table(write=True):
    """Run the workers, print the tables, and write them as a section of BENCHMARKS.md."""
    import datetime
    import os
    from benchmarks.harness import machine_info
    results, fit = [], {}
    for n in (1, 2, 4):
        for kind, r in _launch(n, "--worker"):
            if kind == "S":
                results.append(r)
            else:
                fit[(r["n"], r["bytes"])] = r["s"]
    one_thread = {"FUNCTRANS_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    runs = {1: [], 2: []}         # alternated, three each: a slow spell hits both
    for _ in range(3):
        for n in (1, 2):
            runs[n] += [r["step_s"] for _, r in _launch(n, "--throughput", one_thread)]
    tput = {n: float(np.median(v)) for n, v in runs.items()}
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    alpha, beta = fit_alpha_beta(fit)
    names = list(dict.fromkeys(r["name"] for r in results))
    lines = [f"Written by `python -m benchmarks.distributed --strategies` on "
             f"{datetime.date.today().isoformat()}, on a 2-core machine shared with other "
             f"work while it ran (load average {load} at the end): the times are noisy (and "
             "4 processes share 2 cores); the "
             "byte counts are exact. Each strategy is one jitted float32 step with the code "
             "path of its example in `examples/parallel/` "
             "(`benchmarks/distributed_strategies.py`). Bytes: process 0's, per step, from "
             "`ft.distributed.comm_stats` (the standard algorithms' volumes on the payloads "
             "of the MPI calls made; tested equal to `cost_analysis()` and to an mpi4py-level "
             "count); the all-gather assembling split outputs of a shard_map is listed apart "
             "and left out of the check.", "",
             "Machine: " + ", ".join(f"{k}: {v}" for k, v in machine_info().items()), ""]
    lines += _strategy_rows(results)
    ratio = tput[1] / tput[2]
    lines += ["", f"**Data-parallel throughput** (MLP 784-512-256-10, f32, global batch "
              f"4096, OMP_NUM_THREADS=FUNCTRANS_NUM_THREADS=1; medians of three runs each, "
              f"alternated): 1 process {tput[1] * 1e3:.1f} ms/step, 2 processes "
              f"{tput[2] * 1e3:.1f} ms/step: "
              f"{ratio:.2f}x the throughput (target >= 1.6x: "
              f"{'met' if ratio >= 1.6 else 'not met'} in this run, on a shared machine).",
              "", f"**alpha-beta MODEL, not a measurement**: alpha = {alpha * 1e6:.2f} us, "
              f"beta = {beta * 1e9:.4f} ns/byte ({1 / beta / 1e9 if beta > 0 else float('inf'):.2f} "
              f"GB/s), least squares over {len(fit)} Allreduce timings (each the fastest of its "
              "repetitions) of 8 B...8 MiB on 2 and 4 processes (t = 2(N-1) alpha + 2(N-1)/N S beta). Modelled communication time "
              "per step (ms) of each strategy's textbook collectives (ring / "
              "reduce-scatter + all-gather; PP: 2(M + N - 1) point-to-point messages of one "
              "micro-batch's activations on the critical path, N stages), same global "
              "problem:", ""]
    lines += _model_rows(alpha, beta, names)
    print("\n".join(lines))
    if write:
        path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                            "BENCHMARKS.md")
        write_section(path, SECTION, lines)
        print(f"wrote the section {SECTION!r} of {path}")


if __name__ == "__main__":
    import sys
    if "--strategies" in sys.argv:
        strategies_table(write="--no-write" not in sys.argv)
    elif "--worker" in sys.argv:
        strategies_worker()
    elif "--throughput" in sys.argv:
        throughput_worker()
    elif "--alltoall" in sys.argv:
        alltoall_table(write="--no-write" not in sys.argv)
    else:
        main(write="--no-write" not in sys.argv)
