"""The tests' broker itself (`bench.broker`): the node by hand as the README starts it, and the
one line a user gets when it cannot start."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from aiokafka.admin import AIOKafkaAdminClient

from bench import broker as broker_module
from bench.broker import BrokerError

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.integration


def test_the_session_broker_is_the_pinned_apache_kafka(broker):
    assert broker.version == broker_module.kafka_version()
    text = broker.log_text()
    assert f"Kafka version: {broker.version}" in text
    assert "Kafka Server started" in text


def test_the_broker_by_hand_serves_until_interrupted(tmp_path):
    process = subprocess.Popen([sys.executable, "-m", "bench.broker", "--dir", str(tmp_path)], cwd=ROOT,
                               stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        found = re.fullmatch(r"Apache Kafka (\S+) on (127\.0\.0\.1:\d+) \(pid (\d+), log (.+)\)\n", line)
        assert found is not None, line
        pid = int(found.group(3))

        async def topics() -> list[str]:
            admin = AIOKafkaAdminClient(bootstrap_servers=found.group(2))
            await admin.start()
            try:
                return list(await admin.list_topics())
            finally:
                await admin.close()

        assert isinstance(asyncio.run(topics()), list)
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=60) == 0
        deadline = time.monotonic() + 10
        while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not Path(f"/proc/{pid}").exists(), "the broker outlived its command"
    finally:
        if process.poll() is None:
            process.kill()


def test_without_the_resolved_jars_one_line_says_what_to_run(tmp_path, monkeypatch):
    monkeypatch.setattr(broker_module, "LIB", tmp_path / "lib")
    with pytest.raises(BrokerError, match=r"^Kafka's jars are not resolved in .*: run `make kafka`$"):
        broker_module.kafka_version()
    code = (f"import sys, bench.broker as b; from pathlib import Path; b.LIB = Path({str(tmp_path / 'lib')!r}); "
            f"sys.exit(b.main(['--dir', {str(tmp_path)!r}]))")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60,
                            env={**os.environ})
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.strip().count("\n") == 0 and result.stderr.startswith("error: Kafka's jars are not resolved")
