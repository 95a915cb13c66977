"""The sizes the library, the CLI and the service accept, checked before any work starts.

A few bytes of input can ask for unbounded work: ``topic_created:x:2147483647`` is 26 bytes
and a plan of two billion partitions; a simulation at ``rate: 1e-8`` records per second spans
three thousand years of simulated time. Each entry point that expands its input (what-if
events, simulations, key lists) measures what it would build first and raises
`LimitExceededError` naming the limit and the value; the service answers it as HTTP 413 with
the same words. The defaults are what one machine plans in seconds; pass your own `Limits` to
raise them.

Groups handed in whole (`assignor.assign`) are not checked here: their size is already in the
caller's memory. The service checks them with `Limits.check_group`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from assignor.errors import LimitExceededError

__all__ = ["DEFAULT_LIMITS", "MEMBER_WORK", "Limits", "Sizes"]


# What the checks read, as shapes: this module sits below the model, what-if and the producer
# side (all of which call it), so it names none of their classes.
class _Member(Protocol):
    @property
    def id(self) -> str: ...


class Group(Protocol):
    @property
    def topics(self) -> Mapping[str, int]: ...
    @property
    def members(self) -> Sequence[_Member]: ...


class Event(Protocol):  # (`assignor.events.Event`: each kind's effect on the sizes is its own)
    def rebalances(self, members: int) -> int: ...
    def resize(self, sizes: Sizes) -> None: ...


class Sizes:
    """What a run's limits count, event after event, without building a group: each topic's
    partition count, their total and the members' ids (`Limits.check_events`)."""

    def __init__(self, group: Group) -> None:
        self.topics = dict(group.topics)
        self.members = {member.id for member in group.members}
        self.partitions = sum(self.topics.values())

    def count(self, topic: str, partitions: int) -> None:
        """`topic` has `partitions` partitions now (created, or grown)."""
        self.partitions += partitions - self.topics.get(topic, 0)
        self.topics[topic] = partitions

    def drop(self, topic: str) -> None:
        self.partitions -= self.topics.pop(topic, 0)


class Config(Protocol):
    @property
    def label(self) -> str: ...
    @property
    def records(self) -> int: ...
    @property
    def rate(self) -> float: ...


#: A member's weight in `Limits.max_work`, in partitions: what a rebalance spends per member
#: (encoding, decoding and planning for it; 28 us under java-sticky) against per partition
#: (5.7 us under kip848-range, the slowest per partition), measured on rolling restarts.
MEMBER_WORK = 5


@dataclass(frozen=True)
class Limits:
    """Upper bounds on what one call may build. Each field's name is the name errors give.

    Examples
    --------
    >>> Limits(max_partitions=100).check_sizes(members=3, partitions=120, topics=2)
    Traceback (most recent call last):
    ...
    assignor.errors.LimitExceededError: max_partitions: partitions in the group 120, the limit is 100
    """

    #: Members of one group, at any step of a what-if.
    max_members: int = 10_000
    #: Partitions of one group, all topics together, at any step of a what-if.
    max_partitions: int = 2_000_000
    #: Topics of one group.
    max_topics: int = 100_000
    #: Events of one what-if run.
    max_events: int = 5_000
    #: Rebalances of one what-if run per strategy, the first one and every event's included
    #: (a rolling restart is two per member).
    max_steps: int = 20_000
    #: Records simulated in one call, all runs together.
    max_sim_records: int = 1_000_000
    #: Simulated seconds of sends of one run (``records / rate``); the KIP-794 runs are 60.
    max_sim_seconds: float = 3_600.0
    #: Keys hashed in one call.
    max_keys: int = 1_000_000
    #: Rebalance work of one what-if run, all strategies together: per rebalance, the group's
    #: partitions plus `MEMBER_WORK` per member, summed over rebalances and strategies. Counts and
    #: steps each under their limits can still multiply into hours (10,000 members restarted in
    #: turn under eight strategies: 8 x 20,001 rebalances of 10,000 members). The default is what
    #: the slowest strategy plans in about 25 s on one core of a 2-core machine (`MEMBER_WORK`).
    max_work: int = 4_000_000
    #: Partitions of the plans a what-if answers with (``include_plans``: every step's assignment,
    #: under every strategy), the answer's size: a 300,000-partition migration rehearsal with its
    #: plans was an 83 MB answer.
    max_plan_pairs: int = 2_000_000

    def check_sizes(self, *, members: int, partitions: int, topics: int, where: str = "in the group") -> None:
        """`LimitExceededError` for the first of the three counts past its limit."""
        for limit, value, what in (("max_members", members, "members"), ("max_partitions", partitions, "partitions"),
                                   ("max_topics", topics, "topics")):
            maximum = getattr(self, limit)
            if value > maximum:
                raise LimitExceededError(limit, value, maximum, f"{what} {where}")

    def check_group(self, group: Group) -> None:
        """The group's members, partitions and topics against their limits."""
        self.check_sizes(members=len(group.members), partitions=sum(group.topics.values()), topics=len(group.topics))

    def check_events(self, group: Group, events: Sequence[Event], *, strategies: int = 1,
                     plans: bool = False) -> int:
        """What replaying `events` on `group` under `strategies` strategies would build, counted
        without building it: the number of events and of rebalances, the group's size after each
        event, the rebalance work (`max_work`) and, with `plans` (each step's assignment in the
        answer), the partitions of those plans (`max_plan_pairs`). Events that cannot apply are
        left to `assignor.events.apply_event`, which names them. Returns the number of
        rebalances per strategy (the first one included)."""
        if len(events) > self.max_events:
            raise LimitExceededError("max_events", len(events), self.max_events, "events")
        sizes = Sizes(group)
        steps = 1
        work, pairs = self._work(strategies, 1, len(sizes.members), sizes.partitions, plans, 0, 0,
                                 "by the first rebalance")
        for number, event in enumerate(events, 1):
            rebalances = event.rebalances(len(sizes.members))
            steps += rebalances
            event.resize(sizes)
            members, partitions = sizes.members, sizes.partitions
            self.check_sizes(members=len(members), partitions=partitions, topics=len(sizes.topics),
                             where=f"after event {number} ({event})")
            if steps > self.max_steps:
                raise LimitExceededError("max_steps", steps, self.max_steps, f"rebalances by event {number} ({event})")
            work, pairs = self._work(strategies, rebalances, len(members), partitions, plans, work, pairs,
                                     f"by event {number} ({event})")
        return steps

    def _work(self, strategies: int, rebalances: int, members: int, partitions: int, plans: bool, work: int,
              pairs: int, where: str) -> tuple[int, int]:
        """`work` and `pairs` grown by `rebalances` rebalances of a group of this size under
        `strategies` strategies, each against its limit."""
        work += strategies * rebalances * (partitions + MEMBER_WORK * members)
        if work > self.max_work:
            raise LimitExceededError("max_work", work, self.max_work,
                                     f"rebalance work (partitions + {MEMBER_WORK} x members, summed over "
                                     f"rebalances and {strategies} strateg{'y' if strategies == 1 else 'ies'}) "
                                     f"{where}")
        if plans:
            pairs += strategies * rebalances * partitions
            if pairs > self.max_plan_pairs:
                raise LimitExceededError("max_plan_pairs", pairs, self.max_plan_pairs,
                                         f"partitions of the plans answered (every step, {strategies} "
                                         f"strateg{'y' if strategies == 1 else 'ies'}) {where}")
        return work, pairs

    def check_simulation(self, configs: Iterable[Config]) -> None:
        """Records of all runs together, and each run's span of simulated sends."""
        configs = list(configs)
        records = sum(config.records for config in configs)
        if records > self.max_sim_records:
            raise LimitExceededError("max_sim_records", records, self.max_sim_records, "records in all runs")
        for config in configs:
            if isinstance(config.rate, int | float) and config.rate > 0:
                seconds = config.records / config.rate
                if seconds > self.max_sim_seconds:
                    raise LimitExceededError("max_sim_seconds", _rounded(seconds), _rounded(self.max_sim_seconds),
                                             f"simulated seconds of sends in run {config.label!r} (records / rate)")

    def check_keys(self, count: int) -> None:
        if count > self.max_keys:
            raise LimitExceededError("max_keys", count, self.max_keys, "keys")


def _rounded(seconds: float) -> int | float:
    if not math.isfinite(seconds):  # records / rate of a subnormal rate: no int for it
        return seconds
    return int(seconds) if seconds >= 10 else round(seconds, 3)


#: The limits every entry point applies unless given others.
DEFAULT_LIMITS = Limits()
