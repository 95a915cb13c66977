"""The benchmark's tables: recorded as they print, then written into the README as Markdown.

A section's tables replace what stands between ``<!-- bench:SECTION -->`` and
``<!-- /bench:SECTION -->`` in the README; sections not run keep what they had.
"""

from __future__ import annotations

import contextlib
import io
import re
import sys
from collections.abc import Iterator
from pathlib import Path


class _Tee(io.TextIOBase):
    """Standard output that also keeps every line written."""

    def __init__(self, out) -> None:
        self.out, self.text = out, []

    def write(self, text: str) -> int:
        self.text.append(text)
        return self.out.write(text)

    def flush(self) -> None:
        self.out.flush()


@contextlib.contextmanager
def recorded() -> Iterator[list[str]]:
    """Record what the block prints (it still prints); the list is filled when the block ends."""
    lines: list[str] = []
    tee = _Tee(sys.stdout)
    with contextlib.redirect_stdout(tee):
        yield lines
    lines.extend("".join(tee.text).splitlines())


def markdown(lines: list[str]) -> str:
    """The printed tables as Markdown: each run of ``a | b`` lines is a table, its first line the
    header."""
    out: list[str] = []
    in_table = False
    for line in lines:
        if " | " in line:
            cells = [cell.strip() for cell in line.split(" | ")]
            out.append("| " + " | ".join(cells) + " |")
            if not in_table:
                out.append("|" + "---|" * len(cells))
            in_table = True
        else:
            in_table = False
            if line.strip():
                out.append(line)
            elif out and out[-1]:
                out.append("")
    return "\n".join(out).strip()


def write_readme(readme: Path, tables: dict[str, list[str]]) -> None:
    """Put each section's tables between its markers in `readme` (a section without markers
    there is left out)."""
    text = readme.read_text()
    for section, lines in tables.items():
        # Whatever stands between the markers, nothing included (a section not yet written).
        name = re.escape(section)
        pattern = re.compile(rf"(<!-- bench:{name} -->\n)(?:.*?\n)?(<!-- /bench:{name} -->)", re.DOTALL)
        body = markdown(lines)
        text = pattern.sub(lambda m, body=body: m.group(1) + body + "\n" + m.group(2), text)
    readme.write_text(text)
