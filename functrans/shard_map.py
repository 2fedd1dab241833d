"""``shard_map``: run a function on every process's block of global arrays (SPMD over MPI).

``shard_map(f, mesh, in_specs, out_specs)(*args)`` follows JAX's ``shard_map``:

- **Arguments are global arrays, and every process passes the same global value.** Each
  process cuts its own block out of it, as ``in_specs`` says (``PartitionSpec`` per argument,
  a prefix of the argument's pytree), and runs ``f`` on the blocks. A dimension split over
  mesh axes must divide by their size; a spec longer than the argument's rank is an error.
  A program holding only its own blocks builds the global value first with
  ``make_array_from_process_local_data`` (``functrans.global_array``: an all-gather).
- **Inside ``f``** the mesh axis names are bound: ``lax.psum(x, "data")`` and the other
  collectives run over the processes of that axis (MPI). Code written for
  ``vmap(..., axis_name="data")`` runs unchanged.
- **``out_specs`` says how the global result is assembled**: a dimension split over axes is
  the concatenation of the blocks (an all-gather, so every process again holds the global
  value); an axis a spec does not name is *replicated*: every process along it must hold
  the same value, and the result is that value. With ``check_rep=True`` (the default) an
  out_spec claiming replication of a value that may vary along the axis (it depends on a
  block split over it, on ``axis_index``, ``ppermute``… without a ``psum``/``pmax``/
  ``all_gather`` over that axis) is an error when ``f`` is traced. With ``check_rep=False``
  nothing is checked: a value that does vary is returned as each process's own (the
  processes then hold different results, and its gradient is meaningless).
- **Every process passes arguments of the same shapes and dtypes** (checked once per
  trace, an error on every process otherwise); their values are not compared.

Transforms. ``jvp`` maps tangents the same way as the primals (a replicated argument has a
replicated tangent). Reverse mode follows JAX's rule for replicated (unvarying) inputs: the
derivative of a sharded function with respect to a replicated argument equals the
derivative of the equivalent single-process function. JAX gets there by a psum in the
transpose of the implicit broadcast of an unvarying value; here every cotangent of a value
replicated along an axis is held as per-process parts that sum to it: the cotangent of a
replicated output is divided among its copies, ``psum`` transposes to ``psum``, and the
cotangent of a replicated argument is the ``psum`` of its parts over the axes it is
replicated along (for data parallelism: the gradient all-reduce). Differentiated, a
shard_map becomes two, as in JAX: the body linearized on each process's blocks (its forward
pass, collectives included, runs once and returns the residuals the derivative needs) and
a tangent body reading those residuals; residuals stay on their process (each process's own
block, no communication), so reverse mode does not run the forward pass again (wrap the body
or part of it in ``checkpoint`` to recompute instead of saving). ``vmap`` of a shard_map
maps the body (the batch dimension is never split). A shard_map in another's body (JAX's
nesting, the outer one manual over some axes) differentiates too: the inner one takes the
axes the outer binds as per-process, never as replicated copies of one value.

Gradients taken *inside* the body follow JAX 0.10's ``check_vma`` (``check_vma`` is
accepted as JAX's name of ``check_rep``). With ``check_rep=True`` (JAX's default) a value
is typed by the mesh axes it varies along, as JAX does: the cotangent of a value replicated
along an axis is one value, summed over the axis (``grad`` of a local loss w.r.t.
replicated parameters is the sum of the processes' gradients), and ``psum`` transposes to a
copy. functrans's backward pass holds such a cotangent as per-process parts (``psum``
transposing to ``psum``): ``shard_map_specs.reverse_mode_plan`` divides the cotangent of a
replicated output among its copies and psums the parts of a replicated input's. The
typing is followed into a jit, vmap, checkpoint, cond branch or scan body inside the body
(each such trace records the values its inputs stand for, ``tracing.Trace.sources``); a
loop carry is typed as its initial value, and a body making it vary along an axis the
initial value is replicated along is a TypeError, as in JAX. With ``check_rep=False`` each
process differentiates its body alone (JAX's ``check_vma=False`` values).

Running it: the body is compiled once (CPU backend) and runs on this process's blocks (op
by op under ``ft.disable_jit()``); a collective at the body's top level calls MPI from the
compiled code (``primitives.collectives_native``), one elsewhere (inside a loop, say) is a
host step (an MPI call on numpy buffers, on the communicator of the mesh bound while the
body runs). Under ``jit`` the body is inlined into the enclosing compiled program
(``collectives_native.inline_shard_map``) unless something in it needs that mesh bound.

>>> import functrans as ft, numpy as np
>>> from functrans.sharding import Mesh, P
>>> mesh = Mesh((ft.process_count(),), ("i",))
>>> f = ft.shard_map(lambda x: ft.lax.psum(x.sum(), "i"), mesh, in_specs=P("i"),
...                  out_specs=P())
>>> float(f(np.arange(4.0)))
6.0
"""
from __future__ import annotations

import numpy as np

from backends import default_backend
from jaxpr_ir import ClosedJaxpr, Jaxpr
from jaxpr_ir.passes import cse, dce, inline_calls
from .compiler import compile_closed
from .jit import jit_disabled
from .primitives.base import (Primitive, UndefinedPrimal, Zero, instantiate, is_undefined,
                              move_batch_axis, not_mapped_size)
from .primitives.collectives import psum
from .primitives.collectives_mesh import gather_blocks
from .primitives.collectives_native import inline_shard_map, native_body, native_collectives
from .primitives.control_flow_common import BodyCache
from .primitives.elementwise import mul
from .shard_map_specs import (block_aval, check_replication, collective_axes, forget_typing,
                              global_aval, normalize_spec, spec_axes, spec_leaves)
from . import distributed
from .sharding import (Mesh, NamedSharding, PartitionSpec, bound_mesh, get_mesh, mesh_for,
                       mesh_frames)
from .tracing import Tracer, axis_frames, eval_jaxpr, get_aval, trace_depth, trace_to_jaxpr
from .transforms.partial_eval import linearize_jaxpr
from .transforms.transpose import backward_pass
from .transforms.vmap import vmap_jaxpr
from .tree_util import tree_flatten, tree_unflatten

__all__ = ["shard_map", "shard_map_p"]

shard_map_p = Primitive("shard_map", multiple_results=True)
# The body is a param but not a sub-jaxpr passes and vmap look into: its collectives are
# bound by this equation's own mesh, so it is computed whenever its operands are known.


def _trace_body(fun, avals, mesh, name, ad_vary=None):
    """Trace ``fun`` on block avals with the mesh's axis names bound; the closed-over values
    become leading inputs. ``ad_vary``: (the manual axes, the axes each input varies
    along), for reverse mode inside a body traced with ``check_rep=True``
    (``shard_map_specs.reverse_mode_plan``).
    Returns (ClosedJaxpr without consts, const values)."""
    with bound_mesh(mesh, tracing=True, level=trace_depth(), vmap_depth=len(axis_frames()),
                    ad_vary=ad_vary):
        try:
            j, consts, _ = trace_to_jaxpr(fun, avals, name=name)
        finally:
            forget_typing()     # what it kept of the body's traces (and their sources)
    body = ClosedJaxpr(Jaxpr([], j.constvars + j.invars, j.eqns, j.outvars), [])
    return body, list(consts)


def _replicated(mesh, n_dims):
    return ((),) * n_dims


class _PerProcess(tuple):
    """The spec of a residual passed between the shard_maps reverse mode splits a body into:
    each process's own block under a replicated-looking spec (no communication). Its
    cotangent is that process's own too: a transpose neither divides it among copies nor
    sums it over the axes (as it does for a value really replicated)."""


# --------------------------------------------------------------------------- rules

def _with_mesh(rule):
    """The equation carries the mesh as ``Mesh.key`` (printable); the rule gets the Mesh."""
    def wrapped(*args, mesh, **params):
        return rule(*args, mesh=mesh_for(mesh), **params)
    wrapped.__name__ = rule.__name__
    return wrapped


@_with_mesh
def _shard_map_aval(*avals, jaxpr, mesh, in_specs, out_specs, check_rep):
    for i, (a, s, b) in enumerate(zip(avals, in_specs, jaxpr.in_avals)):
        blk = block_aval(a, s, mesh)
        if blk.shape != b.shape or blk.dtype != b.dtype:
            raise TypeError(f"shard_map: operand {i} {a.str_short()} (block {blk.str_short()}) "
                            f"does not match the body's input {b.str_short()}")
    return [global_aval(a, s, mesh) for a, s in zip(jaxpr.out_avals, out_specs)]


def _block(x, spec, mesh):
    """This process's block of the global array ``x``."""
    x = np.asarray(x)
    idx = []
    for size, names in zip(x.shape, spec):
        if not names:
            idx.append(slice(None))
            continue
        k = size // mesh.axis_size(names)
        i = mesh.axis_index(names)
        idx.append(slice(i * k, (i + 1) * k))
    return x[tuple(idx)]


def _assemble(x, spec, mesh):
    """The global array from every process's block ``x`` (replicated dims: this one's)."""
    for dim, names in enumerate(spec):
        if names:
            x = gather_blocks(mesh, names, x, dim)
    return x


_compiled_bodies = BodyCache()


def _run_body(jaxpr, mesh, blocks):
    """The body on this process's blocks: compiled once per (body, mesh) for the CPU
    backend, its top-level collectives calling MPI natively (``collectives_native``; the
    others, e.g. inside a loop, are host steps that find the mesh bound now); op by op
    under ``disable_jit`` or when another backend is the default."""
    if jit_disabled() or default_backend() != "cpu":
        return eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, blocks)
    key = (mesh.key, native_collectives())
    hit = _compiled_bodies.get(jaxpr, *key)
    if hit is None:
        # inner calls inlined first, so the collectives of an inner jit are found too,
        # repeated ones merged and dead ones dropped (as compile_closed does to host steps;
        # each one left is counted per call); not the whole simplify: its last pass drops
        # the barriers that keep a checkpoint's recomputation apart, and compile_closed
        # simplifies again
        nat = native_body(dce(cse(inline_calls(jaxpr))), mesh) if mesh.size > 1 else None
        body, handles = nat if nat is not None else (jaxpr, ())
        exe = compile_closed(body, "cpu", name="shard_map body")
        fast = getattr(exe, "fast_runner", None)
        hit = _compiled_bodies.put(jaxpr, (exe, fast() if fast else None, tuple(handles)),
                                   *key)
    exe, fast, handles = hit
    # the fast runner reads its arguments as the compiled types without checking them
    if fast is not None and all(type(b) is np.ndarray and b.dtype == a.dtype and
                                b.shape == a.shape for b, a in zip(blocks, jaxpr.in_avals)):
        outs = fast(*blocks, *handles)
    else:
        outs = exe(*blocks, *handles)
    return outs


@_with_mesh
def _shard_map_impl(*args, jaxpr, mesh, in_specs, out_specs, check_rep):
    blocks = [_block(x, s, mesh) for x, s in zip(args, in_specs)]
    with bound_mesh(mesh, vmap_depth=len(axis_frames())):
        outs = _run_body(jaxpr, mesh, blocks)
    return [_assemble(np.asarray(o), s, mesh) for o, s in zip(outs, out_specs)]


_linearized_bodies = BodyCache()


def _linearized_body(jaxpr, nz, mesh):
    """The body split as reverse mode needs it, as JAX's shard_map does: a known body
    (primal blocks -> output blocks and residuals) and a tangent body (residuals, nonzero
    tangent blocks -> tangent output blocks). The body's forward pass, collectives
    included, runs once; the tangent body reads the saved residuals.

    Returns (known body, its consts, tangent body, residual count)."""
    hit = _linearized_bodies.get(jaxpr, nz)
    if hit is not None:
        return hit
    box = []

    def known(*xs):
        outs, lin = linearize_jaxpr(jaxpr.jaxpr, jaxpr.consts, xs, nz)
        box.append(lin)
        return list(outs) + list(lin.residuals)

    body, consts = _trace_body(known, jaxpr.in_avals, mesh, "shard_map linearize")
    lj = box[0].jaxpr
    tangent = ClosedJaxpr(Jaxpr([], lj.constvars + lj.invars, lj.eqns, lj.outvars), [])
    return _linearized_bodies.put(jaxpr, (body, consts, tangent, len(lj.constvars)), nz)


@_with_mesh
def _shard_map_jvp(primals, tangents, *, jaxpr, mesh, in_specs, out_specs, check_rep):
    nz = tuple(type(t) is not Zero for t in tangents)
    if not any(nz):
        outs = shard_map_p.bind(*primals, jaxpr=jaxpr, mesh=mesh.key, in_specs=in_specs,
                                out_specs=out_specs, check_rep=check_rep)
        return outs, [Zero(get_aval(o)) for o in outs]
    body, consts, tangent, n_res = _linearized_body(jaxpr, nz, mesh)
    n_out = len(out_specs)
    # residuals are per-process values: a replicated spec with check_rep=False returns
    # and takes each process's own block as it is (no communication)
    res_specs = tuple(_PerProcess(_replicated(mesh, a.ndim)) for a in body.out_avals[n_out:])
    outs = shard_map_p.bind(*consts, *primals, jaxpr=body, mesh=mesh.key,
                            in_specs=tuple(_replicated(mesh, np.ndim(c)) for c in consts)
                            + in_specs, out_specs=out_specs + res_specs, check_rep=False)
    outs, res = outs[:n_out], outs[n_out:]
    assert len(res) == n_res
    touts = shard_map_p.bind(*res, *[t for t in tangents if type(t) is not Zero],
                             jaxpr=tangent, mesh=mesh.key,
                             in_specs=res_specs + tuple(s for s, m in zip(in_specs, nz) if m),
                             out_specs=out_specs, check_rep=False)
    return outs, touts


def _replicated_axes(spec, mesh, enclosing):
    """The mesh axes a value of ``spec`` is replicated along: those it is not split over,
    less those an enclosing shard_map binds (``enclosing``) and a _PerProcess residual's."""
    if type(spec) is _PerProcess:
        return ()
    used = spec_axes(spec)
    return tuple(a for a in mesh.axis_names if a not in used and a not in enclosing)


def _transposed_body(jaxpr, mask, mesh, in_specs, out_specs, enclosing=frozenset()):
    """(non-linear blocks, output cotangent blocks) -> linear inputs' cotangent blocks.

    A replicated output's cotangent is divided among its copies; a linear input's
    cotangent, summed over the axes it is replicated along (see the module doc). Axes in
    ``enclosing`` (bound by the shard_map whose body holds this one) are not replicated:
    this shard_map's processes along them hold different values, each its own cotangent."""
    in_avals = jaxpr.in_avals
    nonlin = [a for a, m in zip(in_avals, mask) if not m]
    k = len(nonlin)

    def fun(*xs):
        it = iter(xs[:k])
        args = [UndefinedPrimal(a) if m else next(it) for a, m in zip(in_avals, mask)]
        cts = []
        for ct, s, a in zip(xs[k:], out_specs, jaxpr.out_avals):
            c = int(np.prod([mesh.axis_size(n) for n in _replicated_axes(s, mesh, enclosing)]))
            cts.append(ct if c == 1 else mul(ct, np.full(a.shape, 1.0 / c, a.dtype)))
        cts_in = backward_pass(jaxpr.jaxpr, jaxpr.consts, args, cts)
        outs = []
        for ct, s, m in zip(cts_in, in_specs, mask):
            if not m:
                continue
            rep = _replicated_axes(s, mesh, enclosing)
            outs.append(instantiate(ct) if type(ct) is Zero or not rep else psum(ct, rep))
        return outs

    avals = nonlin + list(jaxpr.out_avals)
    return _trace_body(fun, avals, mesh, "shard_map transpose")


@_with_mesh
def _shard_map_transpose(cts, *args, jaxpr, mesh, in_specs, out_specs, check_rep):
    # nested in another shard_map's body: the axes the enclosing one binds are not
    # replicated for this one (the enclosing blocks differ along its manual axes), so its
    # cotangents are neither divided among copies along them nor summed over them
    enclosing = frozenset(a for f in mesh_frames() for a in f.mesh.axis_names)
    mask = tuple(is_undefined(a) for a in args)
    body, consts = _transposed_body(jaxpr, mask, mesh, in_specs, out_specs, enclosing)
    nonlin = [a for a in args if not is_undefined(a)]
    specs = (tuple(_replicated(mesh, np.ndim(c)) for c in consts)
             + tuple(s for s, m in zip(in_specs, mask) if not m) + out_specs)
    outs = shard_map_p.bind(*consts, *nonlin, *[instantiate(c) for c in cts], jaxpr=body,
                            mesh=mesh.key, in_specs=specs,
                            out_specs=tuple(s for s, m in zip(in_specs, mask) if m),
                            check_rep=False)
    it = iter(outs)
    return [next(it) if m else None for m in mask]


@_with_mesh
def _shard_map_batch(args, dims, *, jaxpr, mesh, in_specs, out_specs, check_rep):
    size = not_mapped_size(args, dims)
    args = [x if d is None else move_batch_axis(x, d, 0) for x, d in zip(args, dims)]
    bdims = [None if d is None else 0 for d in dims]
    with bound_mesh(mesh, tracing=True, level=trace_depth(), vmap_depth=len(axis_frames())):
        # axis_name=None: the body's collectives name its mesh axes, never the enclosing vmap's
        bj, _ = vmap_jaxpr(jaxpr, bdims, size, axis_name=None,
                           out_dims_to=[0] * len(jaxpr.out_avals))
    body = ClosedJaxpr(Jaxpr([], bj.jaxpr.constvars + bj.jaxpr.invars, bj.jaxpr.eqns,
                             bj.jaxpr.outvars), [])
    specs = tuple(_replicated(mesh, np.ndim(c)) for c in bj.consts) + tuple(
        s if d is None else ((),) + s for s, d in zip(in_specs, bdims))
    outs = shard_map_p.bind(*bj.consts, *args, jaxpr=body, mesh=mesh.key, in_specs=specs,
                            out_specs=tuple(((),) + s for s in out_specs), check_rep=False)
    return outs, [0] * len(outs)


shard_map_p.def_rules(abstract_eval=_shard_map_aval, impl=_shard_map_impl,
                      jvp=_shard_map_jvp, transpose=_shard_map_transpose,
                      batch=_shard_map_batch)
# under jit on the CPU backend the body runs inside the compiled program, MPI called natively
shard_map_p.compile_inline = inline_shard_map


# --------------------------------------------------------------------------- public

_INFER = type("Infer", (), {"__repr__": lambda self: "Infer"})()   # in_specs omitted


def shard_map(f=None, /, mesh: Mesh | None = None, in_specs=_INFER, out_specs=None,
              check_rep: bool = True, *, check_vma: bool | None = None,
              axis_names: frozenset | set | tuple = frozenset()):
    """``f`` run on each process's blocks of its global arguments (see the module doc).

    ``in_specs``: a PartitionSpec per argument (or one for all), a prefix of the argument
    pytrees; ``out_specs`` likewise for the result. As JAX 0.10's ``jax.shard_map``:
    without ``f`` it returns a decorator; ``mesh`` defaults to the ``set_mesh`` one when
    called; a ``None`` spec (or ``in_specs=None``) makes those leaves no inputs: ``f``
    gets them as they are, on every process (JAX's static arguments; an array so passed
    is replicated); omitted ``in_specs`` are each argument's ``NamedSharding`` spec
    (``device_put`` records it; P() for other values, an error for a traced argument,
    whose sharding functrans does not carry); ``axis_names`` makes only those mesh axes manual (the
    specs and the body's collectives name only them; along the others every process
    runs the body on the same blocks). ``check_vma`` is JAX 0.10's name of ``check_rep``
    (give one of them); a gradient taken inside the body has JAX's values for either
    (see the module doc).

    >>> import functrans as ft, numpy as np
    >>> from functrans.sharding import Mesh, P
    >>> mesh = Mesh((1,), ("data",))
    >>> loss = ft.shard_map(lambda w, x: ft.lax.pmean(((x @ w) ** 2).mean(), "data"),
    ...                     mesh, in_specs=(P(), P("data")), out_specs=P())
    >>> ft.grad(loss)(np.ones(2), np.eye(2)).tolist()
    [1.0, 1.0]
    """
    if check_vma is not None:
        if check_rep is not True and bool(check_rep) != bool(check_vma):
            raise TypeError(f"shard_map: check_rep={check_rep!r} and check_vma={check_vma!r} "
                            "disagree; check_vma is JAX 0.10's name of check_rep, give one")
        check_rep = bool(check_vma)
    if f is None:
        return lambda g: shard_map(g, mesh, in_specs, out_specs, check_rep,
                                   axis_names=axis_names)
    if mesh is not None and not isinstance(mesh, Mesh):
        raise TypeError(f"shard_map: mesh must be a functrans.sharding.Mesh, got {mesh!r}")
    if out_specs is None:
        raise TypeError("shard_map: out_specs must be given (a PartitionSpec, or a pytree "
                        "prefix of the result's of them)")

    def wrapped(*args):
        m = _the_mesh(mesh)
        manual = _manual_axes(m, axis_names)
        all_leaves, tree, specs, leaves, avals, norm = _inputs(args, in_specs, m)
        out_box = []

        def flat_fun(*blocks):
            it = iter(blocks)
            out = f(*tree_unflatten(tree, [x if sp is None else next(it)
                                           for x, sp in zip(all_leaves, specs)]))
            ol, otree = tree_flatten(out)
            out_box.append((out, otree))
            return ol

        _check_same_everywhere(m, avals)
        local = [block_aval(a, s, m) for a, s in zip(avals, norm)]
        auto = set(m.axis_names) - manual     # every process along them holds the same
        body, consts = _trace_body(flat_fun, local, m, "shard_map",
                                   (manual, [spec_axes(s) for s in norm]) if check_rep else None)
        out, otree = out_box[0]
        out_avals = body.out_avals
        ospecs = spec_leaves(out_specs, out, "out_specs")
        onorm = tuple(normalize_spec(s, a, m, f"output {i}", divisible=False)
                      for i, (s, a) in enumerate(zip(ospecs, out_avals)))
        if auto:
            _check_manual(body.jaxpr, norm + onorm, manual, auto)
        cspecs = tuple(_replicated(m, np.ndim(c)) for c in consts)
        if check_rep:
            check_replication(body.jaxpr, cspecs + norm, onorm, m)
        outs = shard_map_p.bind(*consts, *leaves, jaxpr=body, mesh=m.key,
                                in_specs=cspecs + norm, out_specs=onorm, check_rep=check_rep)
        return tree_unflatten(otree, outs)

    wrapped.__name__ = f"shard_map({getattr(f, '__name__', 'f')})"
    wrapped.__doc__ = getattr(f, "__doc__", None)
    return wrapped


def _inputs(args, in_specs, mesh):
    """(every leaf of ``args``, their tree, their specs, the input leaves, their avals and
    normalized specs): a leaf whose spec is None is no input, ``f`` gets it as it is (JAX's
    static argument)."""
    per_arg = (in_specs,) * len(args) if isinstance(in_specs, PartitionSpec) else in_specs
    specs = (_inferred_specs(args, mesh) if in_specs is _INFER
             else spec_leaves(per_arg, args, "in_specs"))
    all_leaves, tree = tree_flatten(args)
    dyn = [(i, x, sp) for i, (x, sp) in enumerate(zip(all_leaves, specs)) if sp is not None]
    leaves = [x for _, x, _ in dyn]
    avals = [get_aval(x) for x in leaves]
    norm = tuple(normalize_spec(sp, a, mesh, f"argument leaf {i}")
                 for (i, _, sp), a in zip(dyn, avals))
    return all_leaves, tree, specs, leaves, avals, norm


def _the_mesh(mesh):
    """The mesh given, else the one ``set_mesh`` made current (as JAX's ``shard_map``)."""
    if mesh is None:
        mesh = get_mesh()
        if mesh is None:
            raise ValueError("shard_map: no mesh: pass mesh= or call it under "
                             "`with ft.set_mesh(mesh):`")
    return mesh


def _manual_axes(mesh, axis_names):
    names = set(axis_names) if axis_names else set(mesh.axis_names)
    bad = sorted(str(n) for n in names - set(mesh.axis_names))
    if bad:
        raise ValueError(f"shard_map: axis_names names {bad[0]!r}, which is not an axis of "
                         f"{mesh!r}")
    return names


def _check_manual(jaxpr, specs, manual, auto):
    """With ``axis_names`` a subset: the specs and the body's collectives name only the
    manual axes (as JAX requires: an auto axis is not bound inside the body)."""
    used = set().union(*[spec_axes(s) for s in specs]) if specs else set()
    named = (used | collective_axes(jaxpr)) & auto
    if named:
        raise ValueError(f"shard_map: mesh axis {sorted(named)[0]!r} is not manual here "
                         f"(axis_names={sorted(manual)}): the specs and the body's "
                         "collectives may name only the manual axes")


def _inferred_specs(args, mesh):
    """``in_specs`` omitted: each leaf's NamedSharding spec (P() for other values)."""
    specs = []
    for i, x in enumerate(tree_flatten(args)[0]):
        if isinstance(x, Tracer):
            raise ValueError(f"shard_map: in_specs cannot be inferred for argument leaf {i}, a "
                             "traced value (functrans does not carry shardings through "
                             "transforms); pass in_specs")
        s = getattr(x, "sharding", None)
        if isinstance(s, NamedSharding) and s.mesh.size > 1 and s.mesh != mesh:
            raise ValueError(f"shard_map: argument leaf {i} is sharded over {s.mesh!r}, not "
                             f"the shard_map's {mesh!r}; pass in_specs")
        specs.append(s.spec if isinstance(s, NamedSharding) else PartitionSpec())
    return specs


def _check_same_everywhere(mesh, avals):
    """Every process must pass arguments of the same shapes and dtypes (else the blocks and
    the collectives would not match up): compared once per trace, so once per compile
    under jit. Raises on every process, naming the first that differs."""
    if mesh.size == 1:
        return
    mine = tuple(a.str_short() for a in avals)
    every = distributed.world().allgather(mine)
    for rank, theirs in enumerate(every):
        if theirs != every[0]:
            raise ValueError(f"shard_map: the processes pass arguments of different types: "
                             f"process 0 passes {list(every[0])}, process {rank} passes "
                             f"{list(theirs)}")
