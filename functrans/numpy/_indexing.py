"""Indexing (``x[idx]``) and indexed updates (``x.at[idx].set(v)``)."""
from __future__ import annotations


def getitem(x, idx):
    raise NotImplementedError("indexing of traced arrays")


def index_update(x, idx, values, mode):
    raise NotImplementedError("indexed updates")
