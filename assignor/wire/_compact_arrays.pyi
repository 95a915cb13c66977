"""The compiled part's signatures (assignor/wire/_compact_arrays.c); `assignor.wire.compiled` calls them."""

from collections.abc import Callable

def read(data: bytes, at: int, ids: dict[bytes, str], names: dict[bytes, str], id_text: Callable[[bytes], str],
         /) -> tuple[list[tuple[str, str, list[int]]], int] | None: ...
def strings(data: bytes, at: int, names: dict[bytes, str], /) -> tuple[list[str], int] | None: ...
