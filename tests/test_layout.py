"""The README's Layout section names every module of the library, the service, the jobs and the
benchmark, folder by folder: a module added, moved or removed without the section following
fails here."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("assignor", "api", "pipeline", "bench")


def _section() -> dict[str, str]:
    """Each folder's bullet of the Layout section: folder -> its text."""
    text = (ROOT / "README.md").read_text()
    layout = text[text.index("\n## Layout\n"):]
    bullets = re.split(r"\n- ", layout)[1:]
    found = {}
    for bullet in bullets:
        match = re.match(r"`([\w/]+)/`", bullet)
        if match:
            found[match.group(1)] = bullet.split("\n\n")[0]
    return found


def _folders() -> dict[str, set[str]]:
    """Each folder of the packages with its modules (``__init__`` and ``__main__`` aside)."""
    out: dict[str, set[str]] = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if "__pycache__" in path.parts:
                continue
            folder = path.parent.relative_to(ROOT).as_posix()
            out.setdefault(folder, set())
            if path.stem not in ("__init__", "__main__"):
                out[folder].add(path.stem)
    return out


def test_every_folder_has_its_bullet_and_every_bullet_a_folder():
    section = _section()
    assert set(_folders()) <= set(section), sorted(set(_folders()) - set(section))
    assert all((ROOT / folder).is_dir() for folder in section), [f for f in section if not (ROOT / f).is_dir()]


def test_every_module_is_named_in_its_folders_bullet():
    section = _section()
    missing = {folder: sorted(m for m in modules if f"`{m}`" not in section[folder])
               for folder, modules in _folders().items()}
    assert not {folder: names for folder, names in missing.items() if names}


def test_every_c_part_is_built_rebuilt_and_cleaned():
    """Each C file of the packages is an extension module in pyproject.toml (with its stub
    beside it), and the Makefile installs again when it changes (``BUILT``) and removes what it
    builds (``clean``): a C part added without the three is never built, or never rebuilt."""
    import tomllib

    sources = {path.relative_to(ROOT).as_posix() for package in PACKAGES for path in (ROOT / package).rglob("*.c")}
    modules = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["ext-modules"]
    assert {source for module in modules for source in module["sources"]} == sources
    for module in modules:
        assert module["name"] == module["sources"][0].removesuffix(".c").replace("/", ".")
        assert (ROOT / module["sources"][0]).with_suffix(".pyi").is_file(), module["name"]
    makefile = (ROOT / "Makefile").read_text()
    built = re.search(r"^BUILT :=((?:.*\\\n)*.*)$", makefile, re.M)
    cleaned = re.search(r"^clean:\n((?:\t.*\n)+)", makefile, re.M)
    assert built is not None and cleaned is not None
    assert sources <= set(built.group(1).replace("\\\n", " ").split())
    assert {source.removesuffix(".c") + ".*.so" for source in sources} <= set(cleaned.group(1).replace("\\\n", " ")
                                                                                .split())
