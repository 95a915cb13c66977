"""A discrete-event model of a producer, to compare partitioners the way KIP-480 and KIP-794
measured them (``kafka-producer-perf-test`` against a few brokers).

The model, in the order a record meets it:

- **Application thread**: ``records`` sends of ``record_size`` bytes, throttled to ``rate``
  records/s like the perf tool (a sender that falls behind catches up without sleeping). A send
  blocks while the accumulator holds ``buffer_memory`` bytes.
- **Partitioner**: ``default`` (KIP-480 sticky: switch when a new batch is needed),
  ``builtin`` (KIP-794: switch after ``batch_size`` bytes; adaptive weights from queue sizes and
  the availability timeout when enabled) or ``roundrobin`` (per record).
- **Accumulator**: one queue of batches per partition; a batch has a 61-byte header and takes
  records until the next one would pass ``batch_size``. A batch is ready when full or after
  ``linger_ms``.
- **Sender**: woken by a new batch or a response, it runs ``sender_delay_ms`` later (records
  arriving meanwhile join open batches). For every broker with fewer than ``max_in_flight``
  requests outstanding and a ready batch, it sends one request with the first batch of each of
  that broker's partitions (up to ``max_request_size``).
- **Brokers**: partition p is led by broker ``p % len(brokers)``. A broker serves one request at
  a time (Kafka handles a connection's requests in order): ``broker_base_ms`` + per batch + per
  KB + the broker's extra latency. The response acknowledges every record in the request.

Latency is from the send call to the acknowledgement, as the perf tool reports it. Everything
is seeded, so a configuration always gives the same result.

Examples
--------
>>> result = run(Config(records=2000, rate=2048, label="short"))
>>> result.records, sum(result.bytes_per_broker) > 2000 * 512
(2000, True)
"""

from __future__ import annotations

import heapq
import itertools
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np

from assignor.errors import SimulationError
from assignor.limits import DEFAULT_LIMITS, Limits
from assignor.partitioners.builtin import SWITCH_RULES, BuiltInPartitioner
from assignor.partitioners.keyless import RoundRobinPartitioner, StickyPartitioner

__all__ = ["PRESETS", "Config", "Result", "SimulationError", "preset", "run"]

BATCH_HEADER = 61
TOPIC = "foo"
PARTITIONERS = ("builtin", "default", "roundrobin")


@dataclass(frozen=True)
class Config:
    label: str = "run"
    records: int = 122_880
    record_size: int = 512
    rate: float = 2048.0
    partitions: int = 3
    brokers: tuple[float, ...] = (20.0, 0.0, 0.0)  # extra latency (ms) of each broker's responses
    partitioner: str = "builtin"
    adaptive: bool = True
    availability_timeout_ms: float = 0.0
    switch_rule: str = "kip"
    batch_size: int = 16384
    linger_ms: float = 0.0
    max_in_flight: int = 5
    buffer_memory: int = 32 * 1024 * 1024
    max_request_size: int = 1024 * 1024
    broker_base_ms: float = 0.5
    broker_ms_per_batch: float = 0.05
    broker_ms_per_kb: float = 0.005
    sender_delay_ms: float = 0.3
    seed: int = 1

    def checked(self) -> Config:
        def positive(name: str, value: object, integer: bool = True) -> None:
            if isinstance(value, bool) or not isinstance(value, int if integer else int | float) or value <= 0:
                raise SimulationError(f"{name}: must be a positive {'integer' if integer else 'number'}, "
                                      f"got {value!r}")

        for name in ("records", "record_size", "partitions", "batch_size", "max_in_flight", "buffer_memory",
                     "max_request_size"):
            positive(name, getattr(self, name))
        positive("rate", self.rate, integer=False)
        if self.records > 10_000_000:
            raise SimulationError(f"records: at most 10,000,000, got {self.records}")
        if not self.brokers or any(not isinstance(b, int | float) or b < 0 for b in self.brokers):
            raise SimulationError("brokers: a non-empty list of extra latencies >= 0 (ms)")
        if self.partitioner not in PARTITIONERS:
            raise SimulationError(f"partitioner: one of {PARTITIONERS}, got {self.partitioner!r}")
        if self.switch_rule not in SWITCH_RULES:
            raise SimulationError(f"switch_rule: one of {SWITCH_RULES}, got {self.switch_rule!r}")
        for name in ("linger_ms", "availability_timeout_ms", "broker_base_ms", "broker_ms_per_batch",
                     "broker_ms_per_kb", "sender_delay_ms"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise SimulationError(f"{name}: must be a number >= 0, got {value!r}")
        return self


@dataclass
class Result:
    config: Config
    records: int
    elapsed_s: float
    records_per_s: float
    mb_per_s: float
    latency_ms: dict[str, float]  # avg, p50, p99, p99.9, max
    bytes_per_broker: list[int]
    batches_per_broker: list[int]
    batches: int
    mean_batch_bytes: float
    latency_growth: float  # mean latency of the last quarter of sends / the first quarter
    worst_second_p99_ms: float  # the highest p99 of any one second of sends: how far latency swings
    timeline: list[dict[str, float]] = field(default_factory=list)  # per second of sends: mean and p99 latency

    def row(self) -> dict[str, Any]:
        """The flat figures of the run (what tables and JSON show)."""
        return {"label": self.config.label, "records": self.records, "elapsed_s": round(self.elapsed_s, 3),
                "records_per_s": round(self.records_per_s, 1), "mb_per_s": round(self.mb_per_s, 3),
                **{f"latency_{k}_ms": round(v, 2) for k, v in self.latency_ms.items()},
                "bytes_per_broker": self.bytes_per_broker, "batches": self.batches,
                "mean_batch_bytes": round(self.mean_batch_bytes, 1), "latency_growth": round(self.latency_growth, 2),
                "worst_second_p99_ms": round(self.worst_second_p99_ms, 2)}

    def to_json(self) -> dict[str, Any]:
        return {**self.row(), "config": asdict(self.config), "batches_per_broker": self.batches_per_broker,
                "timeline": self.timeline}


class _Batch:
    __slots__ = ("bytes", "created", "partition", "sends")

    def __init__(self, partition: int, created: float) -> None:
        self.partition, self.created, self.bytes = partition, created, BATCH_HEADER
        self.sends: list[int] = []  # the records it holds, by number


def _varint_size(value: int) -> int:
    zigzag = (value << 1) ^ (value >> 63)
    size = 1
    while zigzag >= 0x80:
        zigzag >>= 7
        size += 1
    return size


def record_bytes(value_size: int, offset_delta: int = 0) -> int:
    """Bytes a keyless record without headers takes in a v2 batch (DefaultRecord.sizeInBytes)."""
    body = 1 + 1 + _varint_size(offset_delta) + _varint_size(-1) + _varint_size(value_size) + value_size + 1
    return _varint_size(body) + body


# Event kinds, in the order they are handled when due at the same instant.
_RESPONSE, _SEND, _SENDER = 0, 1, 2

# Called now and then with the number of records sent so far.
Progress = Callable[[int], None]


class _Simulation:
    def __init__(self, config: Config, progress: Progress | None = None) -> None:
        self.c = config
        self.progress = progress
        self.events: list[tuple[float, int, int, Any]] = []
        self.sequence = itertools.count()
        self.queues: list[deque[_Batch]] = [deque() for _ in range(config.partitions)]
        self.leader = [p % len(config.brokers) for p in range(config.partitions)]
        self.by_broker = [[p for p in range(config.partitions) if self.leader[p] == b]
                          for b in range(len(config.brokers))]
        self.in_flight = [0] * len(config.brokers)
        self.broker_free = [0.0] * len(config.brokers)
        self.bytes_sent = [0] * len(config.brokers)
        self.batches_sent = [0] * len(config.brokers)
        self.buffer_used = 0
        self.sender_scheduled = False
        self.blocked_record: int | None = None
        self.sent_at = np.zeros(config.records)
        self.acked_at = np.zeros(config.records)
        self.acked = 0
        self.record_size = record_bytes(config.record_size, 1)
        if config.partitioner == "builtin":
            self.builtin = BuiltInPartitioner(config.batch_size, adaptive=config.adaptive, seed=config.seed,
                                              availability_timeout_ms=config.availability_timeout_ms,
                                              switch_rule=config.switch_rule)
        elif config.partitioner == "default":
            self.sticky = StickyPartitioner(seed=config.seed)
        else:
            self.round_robin = RoundRobinPartitioner()

    def schedule(self, time: float, kind: int, payload: Any = None) -> None:
        heapq.heappush(self.events, (time, kind, next(self.sequence), payload))

    def run(self) -> None:
        self.schedule(0.0, _SEND, 0)
        events = self.events
        while events:
            now, kind, _, payload = heapq.heappop(events)
            if kind == _SEND:
                self.send(now, payload)
            elif kind == _SENDER:
                self.sender(now)
            else:
                self.response(now, payload)

    # -- application thread --------------------------------------------------------------------

    def intended(self, record: int) -> float:
        return 1000.0 * record / self.c.rate

    def send(self, now: float, record: int) -> None:
        if self.buffer_used + self.record_size + BATCH_HEADER > self.c.buffer_memory:
            self.blocked_record = record  # send() blocks until a response frees memory
            return
        self.sent_at[record] = now
        self.append(now, record)
        if self.progress is not None and record % 4096 == 0:
            self.progress(record)
        if record + 1 < self.c.records:
            self.schedule(max(now, self.intended(record + 1)), _SEND, record + 1)

    def open_batch(self, partition: int) -> _Batch | None:
        queue = self.queues[partition]
        if queue and queue[-1].bytes + self.record_size <= self.c.batch_size:
            return queue[-1]
        return None

    def append(self, now: float, record: int) -> None:
        c = self.c
        if c.partitioner == "default":
            partition = self.sticky.partition(TOPIC, c.partitions)
            if self.open_batch(partition) is None:  # KIP-480: a new batch is needed, switch first
                partition = self.sticky.on_new_batch(TOPIC, c.partitions, partition)
        elif c.partitioner == "builtin":
            partition = self.builtin.partition(TOPIC, None, c.partitions)
        else:
            partition = self.round_robin.partition(TOPIC, c.partitions)
        batch = self.open_batch(partition)
        appended = self.record_size
        if batch is None:
            batch = _Batch(partition, now)
            self.queues[partition].append(batch)
            self.buffer_used += BATCH_HEADER
            appended += BATCH_HEADER
            self.wake_sender(now)
        batch.bytes += self.record_size
        batch.sends.append(record)
        self.buffer_used += self.record_size
        if c.partitioner == "builtin":
            still_open = batch.bytes + self.record_size <= c.batch_size
            self.builtin.on_append(TOPIC, partition, appended, open_batch=still_open)
        if batch.bytes + self.record_size > c.batch_size:
            self.wake_sender(now)  # a full batch is ready whatever linger.ms says

    # -- sender ----------------------------------------------------------------------------------

    def wake_sender(self, now: float) -> None:
        if not self.sender_scheduled:
            self.sender_scheduled = True
            self.schedule(now + self.c.sender_delay_ms, _SENDER)

    def ready(self, batch: _Batch, now: float) -> bool:
        return (batch.bytes + self.record_size > self.c.batch_size or now - batch.created >= self.c.linger_ms
                or self.blocked_record is not None)  # Java sends everything when memory is exhausted

    def sender(self, now: float) -> None:
        self.sender_scheduled = False
        c = self.c
        if c.partitioner == "builtin" and c.adaptive:
            sizes = {p: len(q) for p, q in enumerate(self.queues)}
            waiting = {p: now - q[0].created for p, q in enumerate(self.queues)
                       if q and self.in_flight[self.leader[p]] >= c.max_in_flight}
            self.builtin.update_load(TOPIC, sizes, waiting)
        next_linger = None
        for broker, partitions in enumerate(self.by_broker):
            heads = [self.queues[p][0] for p in partitions if self.queues[p]]
            if not heads:
                continue
            if not any(self.ready(b, now) for b in heads):
                expiry = min(b.created for b in heads) + c.linger_ms
                next_linger = expiry if next_linger is None else min(next_linger, expiry)
                continue
            if self.in_flight[broker] >= c.max_in_flight:
                continue  # a response will wake the sender
            request: list[_Batch] = []
            size = 0
            for batch in heads:
                if request and size + batch.bytes > c.max_request_size:
                    break
                self.queues[batch.partition].popleft()
                request.append(batch)
                size += batch.bytes
            self.in_flight[broker] += 1
            self.bytes_sent[broker] += size
            self.batches_sent[broker] += len(request)
            start = max(now, self.broker_free[broker])
            done = (start + c.broker_base_ms + c.broker_ms_per_batch * len(request)
                    + c.broker_ms_per_kb * size / 1024 + c.brokers[broker])
            self.broker_free[broker] = done
            self.schedule(done, _RESPONSE, (broker, request))
        if next_linger is not None and not self.sender_scheduled:
            self.sender_scheduled = True
            self.schedule(max(next_linger, now + c.sender_delay_ms), _SENDER)

    def response(self, now: float, payload: tuple[int, list[_Batch]]) -> None:
        broker, request = payload
        self.in_flight[broker] -= 1
        for batch in request:
            self.acked_at[batch.sends] = now
            self.acked += len(batch.sends)
            self.buffer_used -= batch.bytes
        fits = self.buffer_used + self.record_size + BATCH_HEADER <= self.c.buffer_memory
        if self.blocked_record is not None and fits:
            record, self.blocked_record = self.blocked_record, None
            self.schedule(now, _SEND, record)
        if any(self.queues):
            self.wake_sender(now)

    # -- figures ---------------------------------------------------------------------------------

    def result(self) -> Result:
        c = self.c
        latency = self.acked_at - self.sent_at
        elapsed = float(self.acked_at.max()) / 1000.0
        quarter = max(1, c.records // 4)
        first, last = float(latency[:quarter].mean()), float(latency[-quarter:].mean())
        percentiles = np.percentile(latency, [50, 99, 99.9])
        seconds = (self.sent_at // 1000).astype(np.int64)
        # Only the seconds that had sends, each window in send order (a stable sort): one pass,
        # however long the run spans.
        order = np.argsort(seconds, kind="stable")
        present, starts = np.unique(seconds[order], return_index=True)
        timeline = []
        for second, window in zip(present.tolist(), np.split(latency[order], starts[1:]), strict=True):
            timeline.append({"second": second, "mean_ms": round(float(window.mean()), 2),
                             "p99_ms": round(float(np.percentile(window, 99)), 2)})
        batches = sum(self.batches_sent)
        return Result(
            config=c, records=c.records, elapsed_s=elapsed, records_per_s=c.records / elapsed,
            mb_per_s=c.records * c.record_size / elapsed / 1024 / 1024,
            latency_ms={"avg": float(latency.mean()), "p50": float(percentiles[0]), "p99": float(percentiles[1]),
                        "p99.9": float(percentiles[2]), "max": float(latency.max())},
            bytes_per_broker=list(self.bytes_sent), batches_per_broker=list(self.batches_sent), batches=batches,
            mean_batch_bytes=sum(self.bytes_sent) / max(batches, 1), latency_growth=last / max(first, 1e-9),
            worst_second_p99_ms=max(t["p99_ms"] for t in timeline), timeline=timeline)


def run(config: Config, progress: Progress | None = None, *, limits: Limits = DEFAULT_LIMITS) -> Result:
    """Simulate one configuration; `progress(records_sent)` is called now and then.

    Raises `SimulationError` for a configuration the simulator cannot run and
    `LimitExceededError` for one past `limits` (records, simulated seconds of sends)."""
    limits.check_simulation([config.checked()])
    simulation = _Simulation(config, progress)
    simulation.run()
    return simulation.result()


# -- presets: the KIPs' published experiments -----------------------------------------------------

_KIP794 = Config(records=122_880, record_size=512, partitions=3, brokers=(20.0, 0.0, 0.0), linger_ms=0.0)

PRESETS: dict[str, list[Config]] = {
    # KIP-794 test series 1: 2048 records/s (1 MB/s), one broker answers 20 ms late.
    "kip794-series1": [
        replace(_KIP794, label="DefaultPartitioner (KIP-480)", rate=2048, partitioner="default"),
        replace(_KIP794, label="KIP-794 adaptive=false", rate=2048, adaptive=False),
        replace(_KIP794, label="KIP-794 defaults", rate=2048),
        replace(_KIP794, label="KIP-794 availability.timeout.ms=5", rate=2048, availability_timeout_ms=5.0),
    ],
    # KIP-794 test series 2: 4096 records/s (2 MB/s).
    "kip794-series2": [
        replace(_KIP794, label="KIP-794 adaptive=false", rate=4096, adaptive=False),
        replace(_KIP794, label="KIP-794 defaults", rate=4096),
    ],
    # KIP-480: per-record round-robin vs sticky, linger.ms=0, 16 partitions on 4 equal brokers.
    "kip480": [
        Config(label="round-robin per record", records=100_000, rate=10_000, partitions=16,
               brokers=(0.0, 0.0, 0.0, 0.0), partitioner="roundrobin"),
        Config(label="sticky (KIP-480)", records=100_000, rate=10_000, partitions=16,
               brokers=(0.0, 0.0, 0.0, 0.0), partitioner="default"),
    ],
}


def preset(name: str, records: int | None = None, seed: int | None = None) -> list[Config]:
    """The configurations of a preset, optionally shortened to `records` or reseeded."""
    if name not in PRESETS:
        raise SimulationError(f"preset: one of {sorted(PRESETS)}, got {name!r}")
    configs = PRESETS[name]
    if records is not None:
        configs = [replace(c, records=records) for c in configs]
    if seed is not None:
        configs = [replace(c, seed=seed) for c in configs]
    return configs
