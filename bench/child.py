"""A benchmark cell in a process of its own (its peak memory and its warm-up are its own), and
the row it sends back."""

from __future__ import annotations

import multiprocessing
from typing import Any


def in_child(target, *args, start: str = "fork") -> Any:
    """Run ``target(*args, queue)`` in a child process and return what it puts on the queue;
    `start`: ``"spawn"`` for a process that inherits nothing from this one."""
    context = multiprocessing.get_context(start)
    queue = context.Queue()
    process = context.Process(target=target, args=(*args, queue))
    process.start()
    row = answer(queue, process)
    process.join()
    return row


def answer(queue, process) -> Any:
    """The child's row; a child that dies without one (its traceback is on stderr) stops the
    benchmark instead of leaving it waiting for ever."""
    while True:
        try:
            return queue.get(timeout=1.0)
        except Exception:  # noqa: BLE001 - queue.Empty
            if not process.is_alive() and queue.empty():
                raise RuntimeError(f"the benchmark's child process ended with code {process.exitcode}") from None
