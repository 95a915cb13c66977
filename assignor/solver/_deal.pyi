"""The compiled deal's signature (assignor/solver/_deal.c); `assignor.strategies.sticky` wraps it."""

from typing import Any

def deal(cls: Any, member: Any, need: Any, /) -> bytearray: ...
