"""A differential fuzzer for functrans.

Random programs over an op table (``ops.py``: elementwise ops with special values,
broadcasting, reductions, reshapes, slicing, computed and out-of-range indices, ``.at[]``
updates, dot (and ``lax.dot`` of float64 asked for float32), cumsum, sort,
``unique(return_index=True, size=)``, ``lax.cond``/``fori_loop``/``scan`` bodies; dtypes
f32/f64/int32/int64/uint8/uint64/bool; empty and 0-d shapes) are drawn from a seed
(``generator.py``). Each program is rendered twice from one description, as functrans
source and as numpy source, and ``check.py`` runs it eagerly, under ``jit`` on the
``cpu`` and ``interpret`` backends, under ``vmap``, and under grad, jvp, jit∘grad,
vmap∘grad and grad∘grad, comparing every mode with the numpy values (and derivatives
with each other and, for smooth f64 programs, with central finite differences).

Run a campaign from the repository root (each program in a worker process with a
per-program timeout, so a hang is a reported failure and the campaign goes on)::

    python -m tests.fuzz --n 10000 [--seed S] [--timeout 60] [--exclude at,sort]
    python -m tests.fuzz --n 2000 --known      # leave out the KNOWN_ISSUES features

It prints each new distinct failure as it is found, then how many programs,
comparisons, mismatches, crashes and hangs it saw and one minimal standalone repro per
distinct failure (the failing program cut to its shortest failing prefix, with steps
bypassed where the failure stays; the script prints what each failing mode returns). The CI slice is
``tests/fuzz/test_fuzz_quick.py``: a seeded sample that excludes exactly the features
in ``KNOWN_ISSUES`` below; delete an entry when its bug is fixed.

Feature names (for ``exclude``): the ``feature`` column of ``ops.py``; the dtypes
f32 f64 int32 int64 uint8 uint64 bool; the shapes ``empty`` and ``scalar0d``; ``special``
(inf, NaN, ±0, subnormal and huge inputs, wrapping integers); ``broadcast``; and the
modes jit_cpu jit_interpret vmap grad jvp vmap_grad grad_grad; ``aliasing`` (a compiled
result changes neither when the caller writes into its arguments afterwards nor when
another call's result is written into); ``warnings`` (the check that eager operations
leak no numpy RuntimeWarning).
"""

# feature -> the open bug that makes programs using it fail (one line each).
KNOWN_ISSUES: dict[str, str] = {
}
