"""The producer simulator reproduces the shapes of KIP-794's and KIP-480's published results."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from assignor.cli import main
from assignor.partitioners import simulate
from assignor.partitioners.simulate import Config, SimulationError


def runs(name: str, records: int | None = 40_000) -> dict[str, simulate.Result]:
    return {c.label: simulate.run(c) for c in simulate.preset(name, records=records)}


@pytest.fixture(scope="module")
def series1():
    return runs("kip794-series1")


@pytest.fixture(scope="module")
def series2():
    return runs("kip794-series2")


def test_kip480_sticky_overloads_the_slow_broker_and_falls_behind(series1):
    old = series1["DefaultPartitioner (KIP-480)"]
    slow, *fast = old.bytes_per_broker
    assert all(slow >= 3 * f for f in fast)
    assert old.mb_per_s < 0.95  # offered: 2048 x 512 B = 1 MB/s
    assert old.latency_growth > 2  # latency grows over the run


def test_kip794_without_adaptive_spreads_bytes_evenly():
    # A statistical property (a switch draws its next partition at random): the full run.
    result = simulate.run(simulate.preset("kip794-series1")[1])
    assert result.config.adaptive is False
    mean = sum(result.bytes_per_broker) / 3
    assert all(abs(b - mean) <= 0.05 * mean for b in result.bytes_per_broker), result.bytes_per_broker
    assert result.mb_per_s > 0.97


def test_kip794_adaptive_sends_less_to_the_slow_broker_and_cuts_p99(series1):
    uniform, adaptive = series1["KIP-794 adaptive=false"], series1["KIP-794 defaults"]
    timeout = series1["KIP-794 availability.timeout.ms=5"]
    slow, *fast = adaptive.bytes_per_broker
    assert all(slow < f for f in fast)
    assert adaptive.latency_ms["p99"] < uniform.latency_ms["p99"]
    assert timeout.bytes_per_broker[0] < slow  # the timeout steers away from it sooner


def test_at_2mb_per_s_adaptive_keeps_latency_stable_where_uniform_does_not(series2):
    uniform, adaptive = series2["KIP-794 adaptive=false"], series2["KIP-794 defaults"]
    assert adaptive.mb_per_s > 0.97 * 2
    assert adaptive.worst_second_p99_ms < 1.5 * adaptive.latency_ms["p99"]
    assert uniform.worst_second_p99_ms > 2 * adaptive.latency_ms["p99"]
    assert adaptive.bytes_per_broker[0] < min(adaptive.bytes_per_broker[1:])


def test_kip480_sticky_beats_per_record_round_robin_at_linger_zero():
    results = runs("kip480", records=20_000)
    round_robin, sticky = results["round-robin per record"], results["sticky (KIP-480)"]
    assert sticky.batches < round_robin.batches / 2
    assert sticky.mean_batch_bytes > 2 * round_robin.mean_batch_bytes
    assert sticky.latency_ms["p99"] < round_robin.latency_ms["p99"]


def test_runs_are_repeatable_and_seeded():
    config = Config(records=3000, rate=4096)
    assert simulate.run(config).row() == simulate.run(config).row()
    assert simulate.run(config).row() != simulate.run(replace(config, seed=2)).row()


def test_a_small_buffer_blocks_the_sender_but_loses_nothing():
    result = simulate.run(Config(records=5000, rate=50_000, buffer_memory=64 * 1024, partitioner="default"))
    assert result.records == 5000 and result.records_per_s < 50_000


@pytest.mark.parametrize(("field", "value", "message"), [
    ("records", 0, "records"), ("rate", -1, "rate"), ("brokers", (), "brokers"),
    ("partitioner", "magic", "partitioner"), ("switch_rule", "never", "switch_rule"), ("linger_ms", -1, "linger_ms"),
])
def test_bad_configurations_are_named(field, value, message):
    with pytest.raises(SimulationError, match=message):
        simulate.run(replace(Config(records=10), **{field: value}))
    with pytest.raises(SimulationError, match="preset"):
        simulate.preset("kip999")


def test_cli_prints_json_and_writes_plots(tmp_path, capsys):
    pytest.importorskip("matplotlib")  # (the plot extra)
    assert main(["simulate", "--preset", "kip480", "--records", "3000", "--json", "--plot", str(tmp_path)]) == 0
    output = json.loads(capsys.readouterr().out)
    assert [run["label"] for run in output["runs"]] == ["round-robin per record", "sticky (KIP-480)"]
    assert {p.name for p in tmp_path.iterdir()} == {"kip480-bytes-per-broker.png", "kip480-latency.png"}
    assert main(["simulate", "--preset", "kip794-series2", "--records", "2000"]) == 0
    assert "KIP-794 defaults" in capsys.readouterr().out
