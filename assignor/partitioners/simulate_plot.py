"""PNG charts of simulator runs (matplotlib, extra ``[plot]``): bytes per broker and latency
over time, one file each per preset."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from assignor.partitioners.simulate import Result


def plot(results: Sequence[Result], directory: str | Path, name: str) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written = []

    figure, axes = plt.subplots(figsize=(8, 4.5))
    brokers = max(len(r.bytes_per_broker) for r in results)
    width = 0.8 / len(results)
    for i, result in enumerate(results):
        positions = [b + i * width for b in range(brokers)]
        axes.bar(positions, [v / 1e6 for v in result.bytes_per_broker], width, label=result.config.label)
    axes.set_xticks([b + width * (len(results) - 1) / 2 for b in range(brokers)],
                    [f"broker {b}" + (f" (+{results[0].config.brokers[b]:g} ms)" if results[0].config.brokers[b]
                                      else "") for b in range(brokers)])
    axes.set_ylabel("MB sent")
    axes.set_title(f"{name}: bytes per broker")
    axes.legend(fontsize=8)
    written.append(_saved(plt, figure, directory / f"{name}-bytes-per-broker.png"))

    figure, axes = plt.subplots(figsize=(8, 4.5))
    for result in results:
        seconds = [t["second"] for t in result.timeline]
        axes.plot(seconds, [t["p99_ms"] for t in result.timeline], label=result.config.label)
    axes.set_yscale("log")
    axes.set_xlabel("second of the run (by send time)")
    axes.set_ylabel("p99 latency per second (ms, log)")
    axes.set_title(f"{name}: latency over time")
    axes.legend(fontsize=8)
    written.append(_saved(plt, figure, directory / f"{name}-latency.png"))
    return written


def _saved(plt: Any, figure: Any, path: Path) -> Path:
    """`figure` laid out, written to `path` and closed (pyplot keeps every open figure)."""
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path
