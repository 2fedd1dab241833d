"""Many processes: meshes, shard_map and the collectives over mesh axes.

Single-process tests run here (a mesh of one process needs no MPI). The multi-process ones
launch ``mpiexec -n 2`` / ``-n 4`` on the programs in tests/mpi_programs/ as subprocesses
with a timeout, so a hang fails the test instead of stalling the run."""
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import lax
from functrans.sharding import Mesh, P, PartitionSpec

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAMS = os.path.join(ROOT, "tests", "mpi_programs")
TIMEOUT = 120


def _mpiexec():
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    return here if os.path.exists(here) else shutil.which("mpiexec")


def _has_mpi():
    return importlib.util.find_spec("mpi4py") is not None and _mpiexec() is not None


needs_mpi = pytest.mark.skipif(not _has_mpi(), reason="needs mpi4py and mpiexec "
                               "(pip install 'functrans[distributed]')")


def run_mpi_path(n, path, *args, timeout=TIMEOUT):
    """``mpiexec -n n python path args`` from the repository root, with a timeout."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               OMP_NUM_THREADS="1")
    return subprocess.run([_mpiexec(), "-n", str(n), sys.executable, path, *args],
                          capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT)


def run_mpi(n, program, *args):
    return run_mpi_path(n, os.path.join(PROGRAMS, program), *args)


def run_several(n, items, timeout):
    """Run ``items`` (programs, each with its arguments, see run_several.py) one after
    another in one ``mpiexec -n n`` launch: item -> a CompletedProcess-like result, its
    return code 0 only if every rank finished that item (run_several.py's barrier line),
    its stdout the item's part of rank 0's output. A hang fails the item it hangs in."""
    try:
        r = run_mpi_path(n, os.path.join(PROGRAMS, "run_several.py"), *items, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        text = [t.decode(errors="replace") if isinstance(t, bytes) else (t or "")
                for t in (e.stdout, e.stderr)]
        r = subprocess.CompletedProcess(e.cmd, -9, text[0],
                                        f"timed out after {timeout} s\n{text[1]}")
    sections, done, cur = {}, set(), None
    for line in r.stdout.splitlines():
        m = re.fullmatch(r"=== (.+?)( done)?", line)
        if m and m.group(1) in items:
            cur = None if m.group(2) else m.group(1)
            if m.group(2):
                done.add(m.group(1))
            else:
                sections[cur] = []
        elif cur is not None:
            sections[cur].append(line)
    return {p: subprocess.CompletedProcess(
                [p], 0 if p in done else (r.returncode or 1),
                "\n".join(sections.get(p, [f"not run: the shared {n}-process launch ended "
                                            f"before {p} (exit {r.returncode})"])),
                "" if p in done else r.stderr[-20000:])
            for p in items}


# The 4-process runs of these programs share one mpiexec launch (run_several.py): on CI's
# 2 cores a launch of 4 ranks spends ~3.5 s starting processes and importing functrans.
# accounting.py goes last: it wraps the mesh's communicators for the rest of its process.
SHARED_ON_4 = ("native_allgather.py", "native_allreduce.py", "native_alltoall.py",
               "native_collectives.py", "native_loops.py", "collectives.py",
               "grad_replicated.py", "grad_inner.py", "nested_shard_map.py", "groups.py",
               "sweep_transforms.py",
               "multihost.py", "accounting.py")


@pytest.fixture(scope="module")
def shared_on_4():
    """program -> its result within the one 4-process launch (``run_several``)."""
    return run_several(4, SHARED_ON_4, TIMEOUT * 4)


def run_program(request, n, program):
    """``program`` on n processes; on 4, its part of the shared launch."""
    if n == 4 and program in SHARED_ON_4:
        return request.getfixturevalue("shared_on_4")[program]
    return run_mpi(n, program)


# --------------------------------------------------------------------------- one process

def test_one_process_world_and_lazy_mpi():
    # a plain process never imports mpi4py, even running a shard_map over its one-process mesh
    code = ("import sys, numpy as np, functrans as ft\n"
            "from functrans.sharding import Mesh, P\n"
            "ft.distributed.initialize()\n"
            "m = Mesh((1,), ('i',))\n"
            "f = ft.shard_map(lambda x: ft.lax.psum(x, 'i'), m, in_specs=P('i'), out_specs=P())\n"
            "print(ft.process_index(), ft.process_count(), f(np.ones(2)).tolist(),"
            " 'mpi4py' in sys.modules)\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PMI_", "HYDRA", "OMPI"))}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=TIMEOUT, cwd=ROOT, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["0", "1", "[1.0,", "1.0]", "False"]


def test_mesh_and_specs():
    m = Mesh((1, 1), ("data", "model"))
    assert m.axis_sizes == (1, 1) and m.axis_names == ("data", "model") and m.size == 1
    # JAX's Mesh.shape maps names to sizes in axis order (it was the tuple of sizes)
    assert list(m.shape.items()) == [("data", 1), ("model", 1)] and m.shape["model"] == 1
    assert m.shape_tuple == (("data", 1), ("model", 1)) and m.devices.shape == (1, 1)
    assert m.coords == (0, 0) and m.axis_index(("data", "model")) == 0
    assert P is PartitionSpec and P("a", None) == ("a", None)
    with pytest.raises(ValueError, match="needs 2 processes, but the MPI world has 1"):
        Mesh((2,), ("i",))
    with pytest.raises(ValueError, match="distinct"):
        Mesh((1, 1), ("i", "i"))
    with pytest.raises(TypeError, match="PartitionSpec entries"):
        P(3)


def test_shard_map_one_process_values_and_transforms():
    m = Mesh((1,), ("i",))
    x = np.arange(6.0).reshape(2, 3)
    f = ft.shard_map(lambda a: lax.psum(fnp.sin(a) * a, "i"), m, in_specs=P("i"),
                     out_specs=P("i"))
    np.testing.assert_allclose(f(x), np.sin(x) * x)
    np.testing.assert_allclose(ft.jit(f)(x), np.sin(x) * x)
    g = ft.grad(lambda a: fnp.sum(f(a)))(x)
    np.testing.assert_allclose(g, np.cos(x) * x + np.sin(x))
    t = ft.jvp(f, (x,), (np.ones_like(x),))[1]
    np.testing.assert_allclose(t, np.cos(x) * x + np.sin(x))
    v = ft.vmap(f)(np.stack([x, 2 * x]))
    np.testing.assert_allclose(v[1], np.sin(2 * x) * 2 * x)
    # pytrees in and out, a spec prefix for a dict
    h = ft.shard_map(lambda d: {"s": d["a"] + d["b"]}, m, in_specs=P(), out_specs={"s": P()})
    assert h({"a": 1.0, "b": np.float64(2.0)})["s"] == 3.0
    jaxpr = str(ft.make_jaxpr(f)(x))
    assert "shard_map" in jaxpr and "psum" in jaxpr


def test_shard_map_errors_one_process():
    m = Mesh((1,), ("i",))
    ident = lambda a: a   # noqa: E731
    with pytest.raises(ValueError, match="has rank 1 .* names 2 dimensions"):
        ft.shard_map(ident, m, in_specs=P("i", None), out_specs=P("i"))(np.zeros(3))
    with pytest.raises(ValueError, match="not an axis of"):
        ft.shard_map(ident, m, in_specs=P("k"), out_specs=P())(np.zeros(3))
    with pytest.raises(NameError, match="unbound axis name: 'j'"):
        ft.shard_map(lambda a: lax.psum(a, "j"), m, in_specs=P("i"), out_specs=P())(np.zeros(3))
    with pytest.raises(ValueError, match="replicated along mesh axis 'i'"):
        ft.shard_map(lambda a: a * 2.0, m, in_specs=P("i"), out_specs=P())(np.zeros(3))
    # after a psum (or with check_rep=False) the same claim is accepted
    ft.shard_map(lambda a: lax.psum(a, "i"), m, in_specs=P("i"), out_specs=P())(np.zeros(3))
    ft.shard_map(lambda a: a * 2.0, m, in_specs=P("i"), out_specs=P(),
                 check_rep=False)(np.zeros(3))
    with pytest.raises(NameError, match="unbound axis name"):
        lax.psum(np.ones(2), "i")     # outside any vmap / shard_map


def test_shard_map_jax_010_call_forms():
    # jax.shard_map's forms (were TypeErrors): a decorator without f, the set_mesh mesh,
    # in_specs inferred from device_put's shardings, check_vma, axis_names
    m = ft.make_mesh((1, 1), ("x", "y"))
    x = np.arange(8.0)
    with ft.set_mesh(m):
        @ft.shard_map(in_specs=P("x"), out_specs=P())
        def total(b):
            return lax.psum(b.sum(), "x")
        assert float(total(x)) == 28.0
    xs = ft.device_put(x, ft.NamedSharding(m, P(("x", "y"))))
    f = ft.shard_map(lambda b: lax.psum(b * 2, ("x", "y")), mesh=m, out_specs=P(),
                     check_vma=False)
    assert f(xs).tolist() == (2 * x).tolist()
    with pytest.raises(ValueError, match="cannot be inferred for argument leaf 0, a traced"):
        ft.jit(f)(xs)
    with pytest.raises(ValueError, match="no mesh"):
        ft.shard_map(lambda b: b, out_specs=P())(x)
    with pytest.raises(TypeError, match="disagree"):
        ft.shard_map(lambda b: b, m, P(), P(), check_rep=False, check_vma=True)
    g = ft.shard_map(lambda b: lax.psum(b, "x"), m, P("x"), P(), axis_names={"x"})
    assert g(x).tolist() == x.tolist()
    with pytest.raises(ValueError, match="mesh axis 'y' is not manual here"):
        ft.shard_map(lambda b: lax.psum(b, "y"), m, P("x"), P(), axis_names={"x"})(x)
    with pytest.raises(ValueError, match="mesh axis 'y' is not manual here"):
        ft.shard_map(lambda b: b, m, P("y"), P("y"), axis_names={"x"})(x)
    # a None in_spec: the leaf is no input, f gets it as it is (JAX; was a TypeError)
    assert float(ft.shard_map(lambda a: a, mesh=m, in_specs=None, out_specs=P())(3.0)) == 3.0
    assert float(ft.shard_map(lambda a: a, mesh=m, in_specs=(None,), out_specs=P())(3.0)) == 3.0

    class Unhashable:
        __hash__, k = None, 2.0
    got = ft.shard_map(lambda a, b: b * a.k, mesh=m, in_specs=(None, P("x")),
                       out_specs=P("x"))(Unhashable(), x)     # never hashed nor traced
    assert got.tolist() == (2 * x).tolist()


def test_pcast_keeps_values_and_refuses_explicit_types():
    # JAX 0.10's lax.pcast (was missing); its typing is checked on many processes
    # (tests/mpi_programs/grad_replicated.py)
    x = np.array([-0.0, 2.0, np.inf])
    got = ft.vmap(lambda v: lax.pcast(v, "i", to="varying"), axis_name="i")(x)
    assert np.array_equal(np.signbit(got), np.signbit(x)) and got.tolist() == x.tolist()
    g = ft.vmap(ft.grad(lambda v: lax.pcast(v, "i", to="varying") * 3.0), axis_name="i")(x)
    assert g.tolist() == [3.0, 3.0, 3.0]
    with pytest.raises(ValueError, match="Explicit-sharding types"):
        lax.pcast(x, "i", to="reduced")
    with pytest.raises(TypeError, match="must be a str or a tuple"):
        lax.pcast(x, {"i"}, to="varying")


def test_innermost_binding_of_a_name_wins():
    m = Mesh((1,), ("i",))
    X = np.arange(6.0).reshape(3, 2)
    # a vmap outside the shard_map with the same name: the mesh axis (inner) binds psum
    f = ft.shard_map(lambda x: lax.psum(x, "i"), m, in_specs=P(), out_specs=P())
    np.testing.assert_allclose(ft.vmap(f, axis_name="i")(X), X)
    np.testing.assert_allclose(ft.jit(ft.vmap(f, axis_name="i"))(X), X)
    # a vmap inside the body with the same name: the vmap (inner) binds it
    g = ft.shard_map(lambda x: ft.vmap(lambda r: lax.psum(r, "i"), axis_name="i")(x), m,
                     in_specs=P(), out_specs=P())
    np.testing.assert_allclose(g(X), np.broadcast_to(X.sum(0), X.shape))


def test_check_rep_sees_through_control_flow():
    m = Mesh((1,), ("i",))

    def summed_in_scan(x):
        c, _ = lax.scan(lambda c, r: (c + lax.psum(fnp.sum(r), "i"), None), 0.0, x)
        return c

    def varying_carry(x):
        c, _ = lax.scan(lambda c, r: (c + fnp.sum(r), None), 0.0, x)
        return c

    x = np.ones((2, 3))
    assert ft.shard_map(summed_in_scan, m, in_specs=P("i"), out_specs=P())(x) == 6.0
    with pytest.raises(ValueError, match="replicated along mesh axis 'i'"):
        ft.shard_map(varying_carry, m, in_specs=P("i"), out_specs=P())(x)
    with pytest.raises(ValueError, match="replicated along mesh axis 'i'"):
        ft.shard_map(lambda x: lax.cond(lax.axis_index("i") == 0, lambda: 1.0, lambda: 2.0),
                     m, in_specs=P("i"), out_specs=P())(x)


def test_new_collectives_under_vmap():
    X = np.arange(12.0).reshape(2, 2, 3)     # 2 examples, each (2, 3)
    ps = ft.vmap(lambda x: lax.psum_scatter(x, "i"), axis_name="i")(X)
    np.testing.assert_allclose(ps, X.sum(0))
    a2a = ft.vmap(lambda x: lax.all_to_all(x, "i", 0, 0), axis_name="i")(X)
    np.testing.assert_allclose(a2a, X.transpose(1, 0, 2))
    pp = ft.vmap(lambda x: lax.ppermute(x, "i", [(0, 1)]), axis_name="i")(X)
    np.testing.assert_allclose(pp, np.stack([np.zeros((2, 3)), X[0]]))
    assert ft.vmap(lambda x: x * lax.axis_size("i"), axis_name="i")(np.ones(3)).tolist() == \
        [3.0, 3.0, 3.0]


def test_collectives_take_pytrees_and_psum_counts_booleans():
    # JAX pmap_test testCollectivesWithTreesOfDifferentDtypes, testPsumOnBooleanDtype
    t = {"a": np.arange(6.0).reshape(3, 2), "b": np.arange(3, dtype=np.int32)}
    for f, ref in ((lax.psum, np.sum), (lax.pmax, np.max), (lax.pmin, np.min)):
        out = ft.vmap(lambda v: f(v, "i"), axis_name="i")(t)
        for k in t:
            assert out[k].dtype == t[k].dtype
            np.testing.assert_array_equal(out[k], np.broadcast_to(ref(t[k], 0), t[k].shape))
    g = ft.vmap(lambda v: lax.all_gather(v, "i"), axis_name="i")((t["b"], [t["a"]]))
    np.testing.assert_array_equal(g[1][0][2], t["a"])
    c = ft.vmap(lambda v: lax.psum(v, "i"), axis_name="i")(np.array([True, True, False]))
    assert c.dtype == np.int32 and c.tolist() == [2, 2, 2]


def test_grad_inside_vmap_of_a_collective_whose_cotangent_is_a_constant():
    # grad's seed (and a constant's broadcast) is the same for every example: the transpose
    # rules used to bind the collective on it outside the vmap's trace (a NameError, or a
    # mesh collective when a mesh binds the same name). JAX's values.
    per_ex = lambda f, x: np.asarray(ft.vmap(ft.grad(f), axis_name="i")(x))   # noqa: E731
    np.testing.assert_array_equal(per_ex(lambda v: -lax.psum(v, "i"), np.ones(5)), -5.0)
    np.testing.assert_array_equal(
        per_ex(lambda v: lax.ppermute(v, "i", [(0, 1), (1, 0)]), np.array([1.0, 2.0])), 1.0)
    x = np.arange(12.0).reshape(4, 3)
    np.testing.assert_array_equal(per_ex(lambda v: lax.all_gather(v, "i").sum(), x), 4.0)
    np.testing.assert_array_equal(
        per_ex(lambda v: lax.psum_scatter(v, "i", tiled=True).sum(), np.ones((4, 4))), 1.0)
    np.testing.assert_array_equal(
        per_ex(lambda v: lax.all_to_all(v, "i", 0, 0).sum(), np.ones((4, 4))), 1.0)


def test_ppermute_and_all_to_all_over_a_tuple_of_axes():
    # members of ("i", "j") ordered row-major: the same as one axis over the flattened batch
    X = np.arange(2 * 3 * 6 * 5.0).reshape(2, 3, 6, 5)
    flat = X.reshape(6, 6, 5)
    perm = [(0, 5), (5, 2), (2, 0), (3, 4)]
    two = lambda f: ft.vmap(ft.vmap(f, axis_name="j"), axis_name="i")   # noqa: E731
    one = lambda f: ft.vmap(f, axis_name="k")                            # noqa: E731
    got = two(lambda v: lax.ppermute(v, ("i", "j"), perm))(X)
    np.testing.assert_array_equal(np.asarray(got).reshape(6, 6, 5),
                                  one(lambda v: lax.ppermute(v, "k", perm))(flat))
    for s, c, tiled in ((0, 1, False), (0, 0, True), (1, 0, True)):
        x = X if s == 0 else np.tile(X, (1, 1, 1, 6))
        got = two(lambda v: lax.all_to_all(v, ("i", "j"), s, c, tiled=tiled))(x)
        want = one(lambda v: lax.all_to_all(v, "k", s, c, tiled=tiled))(
            x.reshape((6,) + x.shape[2:]))
        np.testing.assert_array_equal(np.asarray(got).reshape(want.shape), want)
    g = ft.grad(lambda x: (two(lambda v: lax.ppermute(v, ("i", "j"), perm))(x) * X).sum())(X)
    np.testing.assert_array_equal(
        np.asarray(g).reshape(6, 6, 5),
        ft.grad(lambda x: (one(lambda v: lax.ppermute(v, "k", perm))(x) * flat).sum())(flat))


# --------------------------------------------------------------------------- mpiexec

@needs_mpi
@pytest.mark.parametrize("n", [1, 2, 4])
def test_collectives_on_mesh_equal_vmap(n, request):
    r = run_program(request, n, "collectives.py")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.split()[0] == "OK"


@needs_mpi
@pytest.mark.parametrize("n", [2, 4])
def test_grad_wrt_replicated_equals_single_process(n, request):
    r = run_program(request, n, "grad_replicated.py")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.split()[0] == "OK"


@needs_mpi
@pytest.mark.parametrize("n", [2, 4])
def test_reverse_mode_inside_inner_traces_of_a_checked_body_equals_jax(n, request):
    # grad / hessian / jacrev inside a jit, vmap, cond, checkpoint or scan inside a
    # check_rep=True body (was an error), custom_vjp bwd cotangents (were 1/N), w.r.t. a
    # scan / fori / while carry (was an error): JAX 0.10.2's values (tests/data); a bwd's
    # varying cotangent of a replicated argument, a carry made varying: raise as JAX
    r = run_program(request, n, "grad_inner.py")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.split() == ["OK", "37"]


@needs_mpi
@pytest.mark.parametrize("n", [2, 4])
def test_reverse_over_reverse_through_shard_map_equals_closed_form(n, request):
    # grad of a vjp / of a grad through shard_map: the residuals' cotangents were averaged
    # over the processes (wrong second derivatives); on 4, a nested shard_map's gradient
    # (it had rows of other blocks)
    r = run_program(request, n, "grad_second_order.py")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.split() == ["OK", "11" if n == 2 else "12"]


@needs_mpi
@pytest.mark.parametrize("n", [2, 4])
def test_reverse_mode_of_a_nested_shard_map_equals_jax(n, request):
    # a shard_map in another's body (outer manual over 'i' only): the inner transpose took
    # 'i' as replicated and mixed the outer blocks (JAX's test_grad_nested_partial_auto_with_
    # residuals); JAX 0.10.2's values on 2 x 2 (n=4), 2 x 1 and 1 x 2 (n=2) meshes
    r = run_program(request, n, "nested_shard_map.py")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.split() == ["OK", "7" if n == 4 else "14"]


@needs_mpi
@pytest.mark.parametrize("n", [2, 4])
def test_transforms_around_and_inside_shard_map_equal_jax(n, request):
    # 192 programs: jvp/vjp/grad/vmap/jit/loops/cond/checkpoint/custom rules x collectives,
    # integer and bool operands, replicated outputs, 2-d meshes: JAX 0.10.2's values
    r = run_program(request, n, "sweep_transforms.py")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.split() == ["OK", "192"]


@needs_mpi
def test_axis_index_groups_over_four_processes_equal_jax(request):
    # a multi-process pmap with axis_index_groups (was a TypeError): JAX 0.10.2's values
    r = run_program(request, 4, "groups.py")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.split() == ["OK", "22"]


@needs_mpi
def test_compositions_on_two_processes():
    r = run_mpi(2, "compose.py")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.split()[0] == "OK"


def faults(n):
    """case -> the message every failing rank prints, on n processes."""
    return {
        "mesh_too_big": f"needs {n + 1} processes, but the MPI world has {n}",
        "mesh_too_small": f"has {n - 1} processes, but the MPI world has {n}: a functrans "
                          "mesh spans every process",
        "spec_rank": f"has rank 1 (shape ({2 * n},)) but its spec PartitionSpec('i', None) "
                     f"names 2",
        "spec_divide": f"does not divide into {n} blocks",
        "unbound_axis": "unbound axis name: 'j'",
        "check_rep": "replicated along mesh axis 'i'",
        "one_rank_raises": "[rank 1] RuntimeError: boom on rank 1",
        "shapes_differ": f"process 0 passes ['f64[{2 * n}]'], process 1 passes "
                         f"['f64[{4 * n}]']",
    }


ABORT_WITHIN_S = 20     # from the raise on one rank to mpiexec's exit (1 s of it is grace)
# On 4 processes, one case per distinct behaviour: a rank raising while the others wait in
# a collective, ranks disagreeing, and (for the five checks every rank makes alike before
# any communication, aborting the same way on 2 processes) spec_divide.
FAULTS_ON_4 = ("one_rank_raises", "shapes_differ", "spec_divide")


@needs_mpi
@pytest.mark.parametrize("case, n", [(c, 2) for c in sorted(faults(2))] +
                         [(c, 4) for c in sorted(FAULTS_ON_4)])
def test_faults_abort_the_job_with_the_message(case, n):
    r = run_mpi(n, "faults.py", case)
    end = time.time()
    assert r.returncode != 0
    assert faults(n)[case] in r.stderr, r.stderr
    assert "no error" not in r.stdout
    if case == "one_rank_raises":   # the others wait in a psum: MPI_Abort must end them
        raised = float(re.search(r"raising at ([0-9.]+)", r.stderr).group(1))
        assert end - raised < ABORT_WITHIN_S, (end - raised, r.stderr)


# program -> (what it checks, fewest checks it must report on 2 / 4 processes); each
# prints "OK <checks>" and exits 0 only if every check held
MPI_PROGRAMS = {
    "accounting.py": ("cost_analysis()'s prediction, comm_stats, ft.profile and a count of "
                      "the buffers handed to mpi4py agree for every collective kind", (2, 4)),
    "native_allreduce.py": ("psum/pmax/pmin calling MPI_Allreduce from a compiled shard_map "
                            "body: bit-equal to the mpi4py host step, counted alike", (1, 1)),
    "native_collectives.py": ("all_gather, psum_scatter, all_to_all and ppermute calling MPI "
                              "from a compiled body: bit-equal to the host steps for every "
                              "dtype (complex included) and axis argument, counted alike",
                              (1, 1)),
    "native_alltoall.py": ("all_to_all as one MPI_Alltoall (a derived receive datatype places "
                           "the chunks): every split / concat axis of 1- to 5-d operands, "
                           "tiled and untiled, 1- to 16-byte dtypes, a 1-d mesh and each axis "
                           "of a 2 x 2 mesh, bit-equal to the host step and a numpy model; no "
                           "transpose in the body; the emitter copies exactly once where the "
                           "split axis' chunks are strided, never elsewhere", (100, 300)),
    "native_allgather.py": ("all_gather as one MPI_Allgather, psum_scatter packed by its "
                            "emitter, psum and ppermute of strided and complex operands: "
                            "bit-equal to the host steps, counted alike, and each emitter's "
                            "calls and copies exactly the expected ones", (100, 300)),
    "multihost.py": ("multihost_utils (allgather / broadcast / assert_equal on pytrees of "
                     "several dtypes, mismatches raising everywhere, host-local <-> global), "
                     "make_array_from_callback / _process_local_data / _single_device_arrays "
                     "on 1-d and 2-d meshes, mesh_utils meshes: exact vs numpy", (77, 95)),
    "native_loops.py": ("psum / ppermute / all_gather inside scan, fori_loop, while and cond "
                        "call MPI natively in an inlined shard_map; a local predicate stays a "
                        "host step; all bit-equal to the host steps, counted alike", (1, 1)),
}


@needs_mpi
@pytest.mark.parametrize("n", [2, 4])
@pytest.mark.parametrize("program", sorted(MPI_PROGRAMS))
def test_mpi_program_checks_hold(program, n, request):
    # the program's own checks (MPI_PROGRAMS[program][0]); a hang fails on run_mpi's timeout
    r = run_program(request, n, program)
    assert r.returncode == 0, r.stdout + r.stderr
    words = r.stdout.split()
    fewest = MPI_PROGRAMS[program][1][0 if n == 2 else 1]
    assert words[0] == "OK" and int(words[1]) >= fewest, r.stdout


def test_cost_analysis_reports_collectives_one_process():
    m = Mesh((1,), ("i",))
    f = ft.jit(ft.shard_map(lambda x: lax.psum(x, "i"), m, in_specs=P("i"), out_specs=P()))
    cost = f.lower(np.ones(4)).compile().cost_analysis()
    assert cost["collectives"] == {} and cost["bytes sent"] == cost["bytes received"] == 0.0
    r = ft.profile(f, np.ones(4), repeats=1, show=False)
    assert r["eager"]["collectives"] == r["compiled"]["collectives"] == {}


def test_benchmark_writes_only_its_own_section(tmp_path):
    from benchmarks.distributed import fit_alpha_beta, write_section
    path = tmp_path / "B.md"
    path.write_text("# B\n\n## Other\n\nkeep me\n\n## Mine\n\nold\n\n## Last\n\nkeep too\n")
    write_section(str(path), "Mine", ["new", "rows"])
    assert path.read_text() == ("# B\n\n## Other\n\nkeep me\n\n## Mine\n\nnew\nrows\n\n"
                                "## Last\n\nkeep too\n")
    write_section(str(path), "Added", ["x"])
    assert path.read_text().endswith("keep too\n\n## Added\n\nx\n")
    # the alpha-beta fit recovers the parameters of timings made from the model
    ts = {(n, s): 2 * (n - 1) * 3e-6 + 2 * (n - 1) / n * s * 5e-10
          for n in (2, 4) for s in (8, 65536, 8 << 20)}
    alpha, beta = fit_alpha_beta(ts)
    assert abs(alpha - 3e-6) < 1e-12 and abs(beta - 5e-10) < 1e-16
