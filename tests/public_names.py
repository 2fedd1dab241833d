"""The public names of a module as its ``__all__`` should list them: what its
annotations need in its namespace (``functrans.typing``'s aliases, ``typing`` names and
the ``annotations`` feature of ``from __future__``) is not exported."""
from __future__ import annotations

ANNOTATION_NAMES = frozenset({"annotations", "Any", "Array", "ArrayLike", "Callable",
                              "DTypeLike", "PrecisionLike", "Sequence", "Shape"})


def public_names(module) -> set:
    return {n for n in dir(module) if not n.startswith("_")} - ANNOTATION_NAMES
