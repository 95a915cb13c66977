"""Apache Kafka for the integration tests and the rebalance bench: one KRaft node (broker and
controller in one process) on free loopback ports, from the jars `make kafka` resolved into
``var/jvm/lib`` (pinned in ``jvm/pom.xml``), stopped by its own PID.

The node is set up for tests: classic groups rebalance without the initial delay
(``group.initial.rebalance.delay.ms=0``); consumer-protocol groups (KIP-848) heartbeat every
500 ms, time out after 6 s and compute a target at every group epoch
(``group.consumer.assignment.interval.ms=0``, where Kafka's default batches changes for 1 s).
Its log (``Broker.log_path``) holds the group coordinator at DEBUG (``jvm/log4j2-broker.yaml``):
every subscription change and target assignment it computed, which `bench.broker_log` reads.
"""

from __future__ import annotations

import base64
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
JVM = ROOT / "jvm"
LIB = ROOT / "var" / "jvm" / "lib"

#: aiokafka consumer settings for the tests and the bench: rebalances bounded by a short session.
CONSUMER_SETTINGS = {"session_timeout_ms": 6000, "heartbeat_interval_ms": 1000, "request_timeout_ms": 15000,
                     "auto_offset_reset": "earliest", "enable_auto_commit": False}

#: What the node runs with beyond its listeners and directories (see the module docstring).
SETTINGS = {
    "offsets.topic.replication.factor": "1", "offsets.topic.num.partitions": "1",
    "transaction.state.log.replication.factor": "1", "transaction.state.log.min.isr": "1",
    "share.coordinator.state.topic.replication.factor": "1", "share.coordinator.state.topic.min.isr": "1",
    "group.initial.rebalance.delay.ms": "0",
    "group.consumer.heartbeat.interval.ms": "500", "group.consumer.min.heartbeat.interval.ms": "500",
    "group.consumer.session.timeout.ms": "6000", "group.consumer.min.session.timeout.ms": "6000",
    "group.consumer.assignment.interval.ms": "0",
}


#: The user of the SASL listener, and the mechanisms it takes (SCRAM's credentials are written
#: when the storage is formatted, PLAIN's in the listener's login module).
SASL_USER, SASL_PASSWORD = "snapshot", "snapshot-secret"
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")


def _sasl_listener() -> dict[str, str]:
    prefix = "listener.name.sasl_plaintext"
    return {"sasl.enabled.mechanisms": ",".join(SASL_MECHANISMS),
            f"{prefix}.plain.sasl.jaas.config": "org.apache.kafka.common.security.plain.PlainLoginModule required "
                                                f'user_{SASL_USER}="{SASL_PASSWORD}";',
            **{f"{prefix}.{m.lower()}.sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule "
                                                         "required;" for m in SASL_MECHANISMS[1:]}}


#: The SSL listeners' key and certificate chain (one PEM file, KIP-651), which the tests also
#: give as a client's keystore, and the CA that signed it (for ``127.0.0.1`` and ``localhost``,
#: server and client use, valid until 2126): test material, not a secret.
TLS = ROOT / "bench" / "tls"
TLS_CA, TLS_CLIENT = TLS / "ca.pem", TLS / "broker.pem"


def _ssl_listeners() -> dict[str, str]:
    """SSL (server authenticated) and MTLS (an SSL listener that requires a client certificate
    `TLS_CA` signed; the broker's own, whose key usage allows it, serves the tests)."""
    keys = {"ssl.keystore.type": "PEM", "ssl.keystore.location": str(TLS_CLIENT)}
    mutual = {**keys, "ssl.truststore.type": "PEM", "ssl.truststore.location": str(TLS_CA),
              "ssl.client.auth": "required"}
    return {**{f"listener.name.ssl.{key}": value for key, value in keys.items()},
            **{f"listener.name.mtls.{key}": value for key, value in mutual.items()}}


class BrokerError(RuntimeError):
    """The broker could not be started; the message is one line saying why."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def kafka_version() -> str:
    """The Kafka version of the resolved jars (``kafka_2.13-X.jar``), or raise `BrokerError`."""
    found = sorted(LIB.glob("kafka_2.13-*.jar")) if LIB.is_dir() else []
    if len(found) != 1:
        where = LIB.relative_to(ROOT) if LIB.is_relative_to(ROOT) else LIB
        raise BrokerError(f"Kafka's jars are not resolved in {where}: run `make kafka`")
    return found[0].name.removeprefix("kafka_2.13-").removesuffix(".jar")


def java() -> str:
    path = shutil.which("java")
    if path is None:
        raise BrokerError("no `java` on PATH: Kafka needs a Java 17+ runtime (`make kafka` installs one)")
    return path


def classpath() -> str:
    return f"{LIB}/*"


def _cluster_id() -> str:
    # Uuid.toString of a random Uuid; Kafka's own randomUuid never starts with '-'.
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


class Broker:
    """One KRaft node on free loopback ports; `stop` kills it by its PID. `joins`: a second node,
    a broker only (PLAINTEXT), of `joins`'s cluster, whose controller it registers with."""

    def __init__(self, directory: Path, *, timeout: float = 60.0, settings: dict[str, str] | None = None,
                 port: int | None = None, joins: Broker | None = None) -> None:
        self.version = kafka_version()
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self.port = port or free_port()
        self.bootstrap = f"127.0.0.1:{self.port}"
        self.log_path = directory / "broker.log"
        shutil.rmtree(directory / "data", ignore_errors=True)  # a folder used before: format anew
        properties = directory / "server.properties"
        first = joins is None
        #: The node's id (a joining node takes the next one), its controller's port and its cluster.
        self.node_id = 1 if joins is None else joins.node_id + 1
        self.controller_port = free_port() if joins is None else joins.controller_port
        self.cluster_id = _cluster_id() if joins is None else joins.cluster_id
        #: A SASL_PLAINTEXT listener (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512) for `SASL_USER`, an SSL
        #: listener whose certificate `TLS_CA` signed, and one that also requires a client
        #: certificate it signed (`TLS_CLIENT`): the first node's ("" on a joining one).
        self.sasl_bootstrap, self.ssl_bootstrap, self.mtls_bootstrap = (
            (f"127.0.0.1:{free_port()}" for _ in range(3)) if first else ("", "", ""))
        # Listener name -> (address, security protocol), each advertised where it listens.
        listeners = {"PLAINTEXT": (self.bootstrap, "PLAINTEXT"), **({
            "SASL_PLAINTEXT": (self.sasl_bootstrap, "SASL_PLAINTEXT"), "SSL": (self.ssl_bootstrap, "SSL"),
            "MTLS": (self.mtls_bootstrap, "SSL")} if first else {})}
        advertised = ",".join(f"{name}://{address}" for name, (address, _protocol) in listeners.items())
        protocols = ",".join(f"{name}:{protocol}" for name, (_address, protocol) in listeners.items())
        lines = {"process.roles": "broker,controller" if first else "broker", "node.id": str(self.node_id),
                 "controller.quorum.bootstrap.servers": f"127.0.0.1:{self.controller_port}",
                 "listeners": advertised + (f",CONTROLLER://127.0.0.1:{self.controller_port}" if first else ""),
                 "advertised.listeners": advertised,
                 "controller.listener.names": "CONTROLLER", "inter.broker.listener.name": "PLAINTEXT",
                 "listener.security.protocol.map": f"{protocols},CONTROLLER:PLAINTEXT",
                 **({**_sasl_listener(), **_ssl_listeners()} if first else {}),
                 "log.dirs": str(directory / "data"), **SETTINGS, **(settings or {})}
        properties.write_text("".join(f"{key}={value}\n" for key, value in lines.items()))
        command = [java(), "-Xms256m", "-Xmx1g", "-XX:+UseSerialGC", "-Djava.awt.headless=true",
                   f"-Dlog4j2.configurationFile={JVM / 'log4j2-broker.yaml'}", "-cp", classpath()]
        scram = [arg for mechanism in SASL_MECHANISMS[1:] for arg in
                 ("--add-scram", f"{mechanism}=[name={SASL_USER},password={SASL_PASSWORD}]")]
        quorum = ["--standalone", *scram] if first else []  # (a broker only joins the controller's quorum)
        formatted = subprocess.run([*command, "kafka.tools.StorageTool", "format", "-t", self.cluster_id,
                                    "-c", str(properties), *quorum],
                                   capture_output=True, text=True, timeout=timeout, check=False)
        if formatted.returncode != 0:
            last = (formatted.stderr or formatted.stdout).strip().splitlines()[-1:] or ["no output"]
            raise BrokerError(f"formatting Kafka's storage failed ({formatted.returncode}): {last[0]}")
        self._log = open(self.log_path, "wb")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen([*command, "kafka.Kafka", str(properties)], stdout=self._log,
                                        stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=directory)
        self.pid = self.process.pid
        try:
            self._wait_until_started(timeout)
        except BrokerError:
            self.stop()
            raise

    def _wait_until_started(self, timeout: float) -> None:
        """Until the node logged that it started and its listener accepts a connection."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise BrokerError(f"Kafka exited with {self.process.returncode} while starting: {self._last_error()}")
            if b"Kafka Server started" in self.log_path.read_bytes():
                try:
                    socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                    return
                except OSError:
                    pass
            time.sleep(0.1)
        raise BrokerError(f"Kafka did not start within {timeout:.0f} s (log: {self.log_path})")

    def _last_error(self) -> str:
        text = self.log_path.read_text(errors="replace")
        errors = re.findall(r"^.*(?:ERROR|Exception|Error:).*$", text, re.MULTILINE)
        return (errors or text.strip().splitlines()[-1:] or ["no output"])[0][:300]

    def log_size(self) -> int:
        return os.path.getsize(self.log_path)

    def log_text(self, start: int = 0) -> str:
        """The broker's log from byte `start`."""
        with open(self.log_path, "rb") as log:
            log.seek(start)
            return log.read().decode("utf-8", errors="replace")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()  # this process only, by its own PID
        self.process.wait(timeout=30)
        self._log.close()


def main(argv: list[str] | None = None) -> int:
    """``python -m bench.broker [--port N] [--dir D]``: the tests' broker by hand, in the
    foreground until interrupted (Ctrl-C or SIGTERM), then stopped by its PID."""
    import argparse
    import signal

    parser = argparse.ArgumentParser(prog="python -m bench.broker", description=main.__doc__)
    parser.add_argument("--port", type=int, default=None, help="the broker's port (default: a free one)")
    parser.add_argument("--dir", type=Path, default=ROOT / "var" / "kafka",
                        help="its data and log (default: %(default)s)")
    args = parser.parse_args(argv)
    try:
        broker = Broker(args.dir, port=args.port)
    except BrokerError as error:
        print(f"error: {error}", file=sys.stderr, flush=True)
        return 2
    stopped = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stopped.set())
    print(f"Apache Kafka {broker.version} on {broker.bootstrap} (pid {broker.pid}, log {broker.log_path})", flush=True)
    try:
        while not stopped.wait(0.5) and broker.process.poll() is None:
            pass
    finally:
        broker.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
