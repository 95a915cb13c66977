"""Our small Java drivers (``jvm/src``, run by `bench.java_members.driver_command`) run on lines of
commands, each answering its ``list`` commands with one tab-separated line."""

from __future__ import annotations

import subprocess

from bench.java_members import driver_command


def listed(driver: str, commands: list[str], timeout: float = 300) -> list[list[str]]:
    """What `driver` (a class in ``jvm/src``) printed for `commands`: one list per ``list``."""
    done = subprocess.run(driver_command(driver), input="\n".join(commands),
                          capture_output=True, text=True, check=True, timeout=timeout)
    return [line.split("\t") if line else [] for line in done.stdout.split("\n")[:-1]]
