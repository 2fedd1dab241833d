"""The keys of a pytree key path (``tree_util.tree_flatten_with_path``): one class per
kind of child, as JAX's.

>>> str(SequenceKey(0)) + str(DictKey("a")) + str(GetAttrKey("mu"))
"[0]['a'].mu"
"""
from __future__ import annotations

__all__ = ["SequenceKey", "DictKey", "GetAttrKey", "FlattenedIndexKey", "keystr"]


class _Key:
    """What the key classes share: one field, equality and hash by type and field."""
    __slots__ = ()
    _field = ""

    def __repr__(self):
        return f"{type(self).__name__}({self._field}={getattr(self, self._field)!r})"

    def __eq__(self, other):
        f = self._field
        return type(other) is type(self) and getattr(other, f) == getattr(self, f)

    def __hash__(self):
        return hash((type(self).__name__, getattr(self, self._field)))


class SequenceKey(_Key):
    """The key of a tuple or list child: its index. Prints as ``[i]``.

    >>> SequenceKey(2)
    SequenceKey(idx=2)
    """
    __slots__ = ("idx",)
    _field = "idx"

    def __init__(self, idx: int) -> None:
        self.idx = idx

    def __str__(self):
        return f"[{self.idx!r}]"


class DictKey(_Key):
    """The key of a dict child. Prints as ``['name']``.

    >>> str(DictKey("w"))
    "['w']"
    """
    __slots__ = ("key",)
    _field = "key"

    def __init__(self, key: Any) -> None:
        self.key = key

    def __str__(self):
        return f"[{self.key!r}]"


class GetAttrKey(_Key):
    """The key of a namedtuple field. Prints as ``.name``.

    >>> str(GetAttrKey("mu"))
    '.mu'
    """
    __slots__ = ("name",)
    _field = "name"

    def __init__(self, name: str) -> None:
        self.name = name

    def __str__(self):
        return f".{self.name}"


class FlattenedIndexKey(_Key):
    """The key of a child of a registered class: its position among the children.

    >>> FlattenedIndexKey(0).key
    0
    """
    __slots__ = ("key",)
    _field = "key"

    def __init__(self, key: int) -> None:
        self.key = key

    def __str__(self):
        return f"[<flat index {self.key}>]"


def keystr(keys: tuple, *, simple: bool = False, separator: str = "") -> str:
    """A key path as text, e.g. ``['a'][0]``; ``simple`` drops brackets and quotes.

    >>> keystr((DictKey("a"), SequenceKey(0))), keystr((DictKey("a"), SequenceKey(0)), simple=True, separator="/")
    ("['a'][0]", 'a/0')
    """
    if not simple:
        return separator.join(str(k) for k in keys)

    def plain(k):
        if isinstance(k, SequenceKey):
            return str(k.idx)
        if isinstance(k, DictKey):
            return str(k.key)
        if isinstance(k, GetAttrKey):
            return k.name
        if isinstance(k, FlattenedIndexKey):
            return str(k.key)
        return str(k)
    return separator.join(plain(k) for k in keys)
