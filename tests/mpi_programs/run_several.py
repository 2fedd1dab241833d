"""Several programs one after another in one MPI job:
``mpiexec -n 4 python run_several.py a.py "b.py --flag" /abs/c.py ...``.

Each item is a program (relative to this folder, or an absolute path) and its arguments,
split at spaces. Each runs as if started on its own (``runpy``: a fresh ``__main__``
namespace, ``sys.argv`` its path and arguments, its folder first on ``sys.path``). Rank 0
prints ``=== <item>`` before a program and, after a barrier that every rank reaches only
once it has finished that program without an error, ``=== <item> done``; so the caller
knows which program's checks held on every rank. A program that raises aborts the job as
it would alone (``ft.distributed.initialize``'s hook), and the programs after it do not
run. What this saves is each program's process starts and ``import functrans`` on every
rank: most of a 4-rank run on 2 cores.
"""
import os
import runpy
import sys

from mpi4py import MPI

import functrans as ft

ft.distributed.initialize()
HERE = os.path.dirname(os.path.abspath(__file__))
ME = MPI.COMM_WORLD.Get_rank()

for item in sys.argv[1:]:
    name, *args = item.split()
    path = os.path.join(HERE, name)
    if ME == 0:
        print(f"=== {item}", flush=True)
    print(f"=== {item} (rank {ME})", file=sys.stderr, flush=True)
    sys.argv = [path, *args]
    sys.path.insert(0, os.path.dirname(path))
    runpy.run_path(path, run_name="__main__")
    sys.path.remove(os.path.dirname(path))
    sys.stdout.flush()
    MPI.COMM_WORLD.Barrier()
    if ME == 0:
        print(f"=== {item} done", flush=True)
