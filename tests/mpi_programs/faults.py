"""Bad input and faults under mpiexec: ``python faults.py CASE``. Every case must end the
whole job quickly with a non-zero exit and the failing rank's message (never a hang)."""
import sys
import time

import numpy as np

import functrans as ft
from functrans import lax
from functrans.sharding import Mesh, P

ft.distributed.initialize()
n = ft.process_count()
case = sys.argv[1]

if case == "mesh_too_big":
    Mesh((n + 1,), ("i",))
if case == "mesh_too_small":    # JAX allows a mesh over some devices; functrans refuses
    Mesh((n - 1,), ("i",))
mesh = Mesh((n,), ("i",))
if case == "spec_rank":
    ft.shard_map(lambda x: x, mesh, in_specs=P("i", None), out_specs=P("i"))(np.zeros(2 * n))
elif case == "spec_divide":
    ft.shard_map(lambda x: x, mesh, in_specs=P("i"), out_specs=P("i"))(np.zeros(2 * n + 1))
elif case == "unbound_axis":
    ft.shard_map(lambda x: lax.psum(x, "j"), mesh, in_specs=P("i"),
                 out_specs=P("i"))(np.zeros(n))
elif case == "check_rep":
    ft.shard_map(lambda x: x * 2.0, mesh, in_specs=P("i"), out_specs=P())(np.zeros(n))
elif case == "shapes_differ":
    size = 2 * n if ft.process_index() == 0 else 4 * n
    ft.shard_map(lambda x: x, mesh, in_specs=P("i"), out_specs=P("i"))(np.zeros(size))
elif case == "one_rank_raises":
    # rank 1 fails; the others wait in a collective that rank 1 never joins
    def body(x):
        return lax.psum(x, "i")
    if ft.process_index() == 1:
        # the test measures from here to mpiexec's exit
        print(f"raising at {time.time():.3f}", file=sys.stderr, flush=True)
        raise RuntimeError("boom on rank 1")
    ft.shard_map(body, mesh, in_specs=P("i"), out_specs=P())(np.zeros(n))
print("no error in case", case)
