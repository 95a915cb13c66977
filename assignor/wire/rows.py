"""An array of structs read in columns: what the compiled reader gives for a long array whose
elements all have one layout (a Metadata response's partitions: a million of them in a large
cluster). It is the sequence of tuples the plain codec reads (equal to it, element for element),
made only when asked for; `column` gives a field's values as one array without making them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, overload

import numpy as np

__all__ = ["Rows"]


class Rows(Sequence[tuple[Any, ...]]):
    """Rows of `names` from `columns`: a field's column is one value per row, or (an array of
    INT32) a row of values per row."""

    __slots__ = ("_columns", "_count", "_names")

    def __init__(self, names: tuple[str, ...], columns: tuple[np.ndarray, ...], count: int) -> None:
        self._names, self._columns, self._count = names, columns, count

    def column(self, name: str) -> np.ndarray:
        """A field's values: one per row, or a row of them (count x length) for an array."""
        return self._columns[self._names.index(name)]

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return zip(*(column.tolist() for column in self._columns), strict=True)

    @overload
    def __getitem__(self, index: int) -> tuple[Any, ...]: ...
    @overload
    def __getitem__(self, index: slice) -> list[tuple[Any, ...]]: ...
    def __getitem__(self, index: int | slice) -> tuple[Any, ...] | list[tuple[Any, ...]]:
        if isinstance(index, slice):
            return list(zip(*(column[index].tolist() for column in self._columns), strict=True))
        if not -self._count <= index < self._count:
            raise IndexError("row index out of range")
        return tuple(column[index].tolist() for column in self._columns)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return NotImplemented
        return len(other) == self._count and all(mine == theirs for mine, theirs in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]  # (a sequence compared by value, as a list is)

    def __repr__(self) -> str:
        return f"Rows({self._count} of {', '.join(self._names)})"
