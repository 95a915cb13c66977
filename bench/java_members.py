"""Java consumers for the tests and the rebalance bench: our member driver
(``jvm/src/MemberDriver.java``), compiled on first use against the pinned ``kafka-clients``,
hosts several `KafkaConsumer`s as threads of one JVM; this side sends its commands and reads its
events (JSON lines, timestamps on ``time.monotonic``'s clock).

A `JavaMember` has the shape of the bench's other members (`bench.rebalance`): ``start``,
``stop``, ``partitions``, ``records``, ``revoked``, ``lost``, and it feeds a `Timeline` with the
times its callbacks ran in the JVM.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from bench.broker import JVM, ROOT, BrokerError, classpath, java
from bench.ownership import Timeline

CLASSES = ROOT / "var" / "jvm" / "classes"
SOURCES = sorted((JVM / "src").glob("*.java"))

#: Java consumer settings matching `bench.broker.CONSUMER_SETTINGS` (classic groups).
CLASSIC = {"session.timeout.ms": "6000", "heartbeat.interval.ms": "1000", "auto.offset.reset": "earliest",
           "enable.auto.commit": "false"}
#: Consumer-protocol members (KIP-848): the broker sets heartbeat and session.
CONSUMER = {"group.protocol": "consumer", "auto.offset.reset": "earliest", "enable.auto.commit": "false"}

COOPERATIVE_STICKY = "org.apache.kafka.clients.consumer.CooperativeStickyAssignor"
RANGE = "org.apache.kafka.clients.consumer.RangeAssignor"


def compiled() -> Path:
    """The driver's classes, compiled again when a source is newer than them."""
    stamp = CLASSES / "MemberDriver.class"
    if stamp.exists() and all(source.stat().st_mtime <= stamp.stat().st_mtime for source in SOURCES):
        return CLASSES
    CLASSES.mkdir(parents=True, exist_ok=True)
    javac = shutil.which("javac") or str(Path(java()).resolve().with_name("javac"))
    if not Path(javac).exists():
        raise BrokerError("no `javac`: the Java member driver needs a JDK 17+ (`make kafka` installs one)")
    done = subprocess.run([javac, "-d", str(CLASSES), "-cp", classpath(), *map(str, SOURCES)],
                          capture_output=True, text=True, check=False, timeout=120)
    if done.returncode != 0:
        raise BrokerError(f"javac failed on the member driver: {done.stderr.strip().splitlines()[:1]}")
    return CLASSES


def driver_command(driver: str, *options: str) -> list[str]:
    """The command that runs `driver` (a class in ``jvm/src``, compiled: `compiled`) on Kafka's
    jars, with these JVM `options`."""
    return [java(), *options, "-cp", f"{compiled()}:{classpath()}", driver]


class JavaMembers:
    """One JVM of Java members; `close` ends it (members close first, then the JVM by its PID)."""

    def __init__(self, log_path: Path) -> None:
        self.log_path = log_path
        self._log = open(log_path, "ab")  # noqa: SIM115 - closed in close()
        self.process = subprocess.Popen(
            driver_command("MemberDriver", "-Xms64m", "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                           f"-Dlog4j2.configurationFile={JVM / 'log4j2-members.yaml'}"),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log, text=True, bufsize=1)
        self.members: dict[str, JavaMember] = {}
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def send(self, command: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        with self._lock:
            self.process.stdin.write(json.dumps(command) + "\n")
            self.process.stdin.flush()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            event = json.loads(line)
            member = self.members.get(event["member"])
            if member is not None:
                member.handle(event)

    def member(self, name: str, bootstrap: str, group: str, topics: Iterable[str], config: dict[str, str],
               timeline: Timeline | None = None, regex: str | None = None) -> JavaMember:
        """A member not started yet (`JavaMember.start`); `config` adds consumer properties;
        `regex`: a regex subscription the broker resolves (KIP-848), in place of `topics`."""
        member = JavaMember(self, name, timeline, list(topics),
                            {"bootstrap.servers": bootstrap, "group.id": group, "client.id": name, **config}, regex)
        self.members[name] = member
        return member

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self.send({"op": "quit"})
                self.process.wait(timeout=60)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()  # by its own PID
                self.process.wait(timeout=10)
        self._reader.join(timeout=10)
        self._log.close()


class JavaMember:
    """One Java consumer of a `JavaMembers` JVM."""

    def __init__(self, host: JavaMembers, name: str, timeline: Timeline | None, topics: list[str],
                 config: dict[str, str], regex: str | None = None) -> None:
        self.host, self.name, self.timeline = host, name, timeline
        self.topics, self.config, self.regex = topics, config, regex
        self.events: list[dict[str, Any]] = []
        self.records: list[tuple[float, int, int]] = []  # (monotonic time, partition, offset)
        self.revoked: list[set[int]] = []
        self.lost: list[set[int]] = []
        self.owned: set[tuple[str, int]] = set()
        self.errors: list[str] = []
        self.stopping = False
        self._started, self._closed = threading.Event(), threading.Event()

    def handle(self, event: dict[str, Any]) -> None:
        kind, at = event["event"], event["at"]
        self.events.append(event)
        partitions = {(topic, p) for topic, p in event.get("partitions", ())}
        if kind == "assigned":
            self.owned |= partitions
            if self.timeline is not None:
                self.timeline.take(self.name, {p for _t, p in partitions}, at=at)
        elif kind in ("revoked", "lost"):
            if not self.stopping:
                (self.revoked if kind == "revoked" else self.lost).append({p for _t, p in partitions})
            self.owned -= partitions
            if self.timeline is not None:
                self.timeline.release(self.name, {p for _t, p in partitions}, at=at)
        elif kind == "records":
            self.records.extend((at, p, o) for _t, p, o in event["records"])
        elif kind == "started":
            self._started.set()
        elif kind == "closed":
            self._closed.set()
        elif kind == "error":
            self.errors.append(event["message"])
            self._started.set()

    def callbacks(self) -> list[tuple[str, int, set[tuple[str, int]]]]:
        """(event, generation or member epoch, partitions) of each rebalance callback, in order."""
        return [(e["event"], e["generation"], {(t, p) for t, p in e["partitions"]})
                for e in list(self.events) if e["event"] in ("assigned", "revoked", "lost")]

    async def start(self, timeout: float = 60.0) -> JavaMember:
        self.host.send({"op": "start", "member": self.name, "topics": self.topics, "config": self.config,
                        **({"regex": self.regex} if self.regex is not None else {})})
        await asyncio.to_thread(self._started.wait, timeout)
        if self.errors or not self._started.is_set():
            raise RuntimeError(f"Java member {self.name} did not start: {self.errors or 'no answer'}")
        return self

    def subscribe(self, topics: Iterable[str]) -> None:
        self.topics = list(topics)
        self.host.send({"op": "subscribe", "member": self.name, "topics": self.topics})

    async def stop(self, timeout: float = 60.0) -> None:
        """Close the consumer (it revokes through its listener and leaves the group)."""
        self.stopping = True
        self.host.send({"op": "close", "member": self.name})
        await asyncio.to_thread(self._closed.wait, timeout)
        if not self._closed.is_set():
            raise RuntimeError(f"Java member {self.name} did not close within {timeout} s")
        if self.timeline is not None:
            self.timeline.release(self.name, self.timeline.owned_by(self.name), at=time.monotonic())

    def partitions(self) -> set[int]:
        return {p for _t, p in self.owned}
