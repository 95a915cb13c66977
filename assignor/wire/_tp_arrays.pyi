"""The compiled part's signature (assignor/wire/_tp_arrays.c); `assignor.wire.arrays.read_tp_columns` calls it."""

from collections.abc import Callable
from typing import Any

def read(buffer: Any, position: Any, limit: Any, known: dict[bytes, str], text: Callable[[bytes], str | None], /
         ) -> tuple[bytearray, bytearray, bytearray, bytearray, bytearray, bytearray, list[str]]: ...
def name_hash(raw: bytes, /) -> int: ...
