"""One Kafka version, pinned in ``jvm/pom.xml``: the jars the tests resolve, the broker
docker-compose gives users and the version the README names agree, and the pin keeps the
binding that makes the broker log (slf4j 2 beside log4j's slf4j2 binding)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")  # (the test extra; a core install skips this module)


ROOT = Path(__file__).resolve().parents[1]
POM = (ROOT / "jvm" / "pom.xml").read_text()


def _property(name: str) -> str:
    found = re.search(rf"<{re.escape(name)}>([^<]+)</{re.escape(name)}>", POM)
    assert found is not None, name
    return found.group(1)


def test_compose_runs_the_pinned_kafka_with_the_consumer_protocol_on():
    kafka = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]["kafka"]
    assert kafka["image"] == f"apache/kafka:{_property('kafka.version')}"
    protocols = kafka["environment"]["KAFKA_GROUP_COORDINATOR_REBALANCE_PROTOCOLS"].split(",")
    assert {"classic", "consumer"} <= set(protocols)


def test_the_readme_names_the_pinned_kafka():
    readme = (ROOT / "README.md").read_text()
    named = set(re.findall(r"Kafka (4\.\d+\.\d+)", readme))
    assert named == {_property("kafka.version")}, named


def test_the_pin_is_a_kafka_with_the_consumer_protocol_and_a_logging_broker():
    major, minor, _ = (int(part) for part in _property("kafka.version").split("."))
    assert (major, minor) >= (4, 0)  # KIP-848's consumer protocol is GA from 4.0
    assert _property("slf4j.version").startswith("2.")
    for artifact in ("kafka_2.13", "kafka-clients", "kafka-tools", "slf4j-api", "log4j-slf4j2-impl", "log4j-core"):
        assert f"<artifactId>{artifact}</artifactId>" in POM, artifact
