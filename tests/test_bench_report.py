"""The benchmark writes its tables into the README between markers (not pasted by hand)."""

from __future__ import annotations

from bench import report
from bench.__main__ import java_text


def test_printed_tables_become_markdown_between_their_markers(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("intro\n<!-- bench:wire -->\nold\n<!-- /bench:wire -->\n"
                      "<!-- bench:keys -->\nkept\n<!-- /bench:keys -->\n<!-- bench:java -->\n<!-- /bench:java -->\n")
    with report.recorded() as lines:
        print("a | b")
        print("1 | 2")
        print()
        print("c | d")
    report.write_readme(readme, {"wire": lines, "java": lines[:2]})
    assert readme.read_text() == ("intro\n<!-- bench:wire -->\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"
                                  "| c | d |\n|---|---|\n<!-- /bench:wire -->\n"
                                  "<!-- bench:keys -->\nkept\n<!-- /bench:keys -->\n"
                                  "<!-- bench:java -->\n| a | b |\n|---|---|\n| 1 | 2 |\n<!-- /bench:java -->\n")


def test_the_java_column_shows_the_java_clients_time_and_loads_or_its_limit():
    assert java_text({"seconds": 2.914, "loads": "99-101"}, 120) == "2.91 s (99-101)"
    assert java_text({"seconds": None, "loads": "-"}, 120) == "> 120 s"
    assert java_text(None, 120) == "-"  # (not run: --peer-limit 0)


def _dies(queue) -> None:
    raise SystemExit(3)


def test_a_child_that_dies_without_a_row_stops_the_benchmark():
    """A section whose child failed (wrk missing, say) used to leave the benchmark waiting for
    ever on its queue."""
    import pytest

    from bench.child import in_child

    with pytest.raises(RuntimeError, match="ended with code 3"):
        in_child(_dies)


def test_the_record_row_measures_what_a_leader_writes():
    """`bench/record.py` at a small size: our default assignments are the bytes Java's leader
    writes for the same uniform plan; V1 user data doubles them."""
    from bench import record

    ours = record.assignment_bytes("sticky", 40)
    assert ours == record.assignment_bytes("java-sticky", 40, as_java=True)
    assert record.assignment_bytes("sticky", 40, user_data=True) > 1.8 * ours
    members, size = record.largest("range")
    assert size <= record.LIMIT < record.assignment_bytes("range", members + 10)


def test_a_group_the_broker_would_not_convert_is_said_so_with_the_brokers_reason():
    """The rebalance table's row for an online migration Kafka refused (its coordinator's line,
    as Apache Kafka 4.3.1 logs it for a librdkafka cooperative-sticky group)."""
    from bench.rebalance import refused_conversion

    line = ("[2026-11-27T17:06:19,014] WARN [GroupCoordinator id=1 topic=__consumer_offsets partition=0] Cannot "
            "upgrade classic group g-1c8df5d2 to consumer group: userData from a custom assignor would be lost. "
            "(org.apache.kafka.coordinator.group.GroupMetadataManager)\n")
    assert refused_conversion("before\n" + line) == ("the broker refused to convert the group: userData from a "
                                                     "custom assignor would be lost")
    assert refused_conversion("Stabilized group g generation 3 with 3 members.\n") is None


def test_the_upgrade_rows_say_what_the_rehearsal_predicts_for_the_group_the_run_formed():
    """Beside each online migration the bench measures, `whatif.migrate`'s prediction for the
    same group: revoked and moved, or Kafka's refusal where the leader writes assignment user
    data (librdkafka's cooperative-sticky)."""
    from bench.rebalance import REHEARSED_AS, UPGRADES, rehearsal

    formed = [{0, 3, 6, 9}, {1, 4, 7, 10}, {2, 5, 8, 11}]
    ours = rehearsal("aiokafka + our cooperative-sticky", "t", formed)
    assert ours.startswith("revoked ") and ", moved " in ours
    assert rehearsal("Java cooperative-sticky", "t", formed).startswith("revoked ")
    refused = rehearsal("librdkafka cooperative-sticky", "t", formed)
    assert refused == "refused: the assignments' user data (KAFKA-18134)"
    assert {client for client, _to in UPGRADES} <= set(REHEARSED_AS)


def test_the_franz_go_section_is_one_line_without_go_or_without_its_module(monkeypatch, capsys):
    import subprocess

    from bench import franz

    monkeypatch.setattr(franz.shutil, "which", lambda name: None)
    franz.main(quick=True)
    assert capsys.readouterr().out == ("franz-go: not run (no `go` on the PATH; Go 1.26 builds bench/franz from the "
                                       "module proxy)\n")

    def unreachable():
        raise subprocess.CalledProcessError(1, "go", stderr="go: downloading github.com/twmb/franz-go v1.22.3\n"
                                                           "go: github.com/twmb/franz-go@v1.22.3: no such host\n")

    monkeypatch.setattr(franz, "build", unreachable)
    franz.main(quick=True)
    assert capsys.readouterr().out == ("franz-go: not run (`go build` in bench/franz failed: go: "
                                       "github.com/twmb/franz-go@v1.22.3: no such host)\n")
