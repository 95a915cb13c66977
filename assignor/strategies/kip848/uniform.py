"""Kafka's broker-side ``uniform`` assignor (KIP-848), decision for decision.

``UniformAssignor`` runs one of two builders by the group's subscription type:

- **homogeneous** (``UniformHomogeneousAssignmentBuilder``, with KAFKA-18688, May 2025): every
  member keeps up to its quota walking its own assignment in iteration order; since KAFKA-18688
  the ``P % M`` extra partitions stay with members that already hold more than the minimum, and
  any still unclaimed go to the last members in iteration order; members still short take
  consecutive slices of the unassigned partitions.
- **heterogeneous** (``UniformHeterogeneousAssignmentBuilder``, the KAFKA-17710 rewrite):
  partitions of topics a member no longer subscribes to are dropped and everything else kept;
  unassigned partitions go topic by topic (most partitions per subscriber first) to the least
  loaded subscriber; then at most 16 passes move partitions from the most to the least loaded
  subscribers of each topic. With overlapping subscriptions it can stop at 9/10/11 where
  10/10/10 exists (its own javadoc says so).

A member whose assignment the builder does not touch gets the same map back, so its order is
the order it came in; one it alters is deep-copied first (``AssignorHelpers.deepCopyAssignment``).
"""

from __future__ import annotations

from collections.abc import Callable

from assignor.errors import JavaAssignorFailure
from assignor.java_hash import JavaHashMap, float_capacity, integer_hash
from assignor.strategies.kip848.coordinator import (
    Assignment,
    CoordinatorSpec,
    PartitionSet,
    new_partition_set,
    topic_hash,
)
from assignor.topic_ids import TopicId

__all__ = ["MAX_ITERATION_COUNT", "assign"]

#: ``UniformHeterogeneousAssignmentBuilder.MAX_ITERATION_COUNT``: balancing passes at most.
MAX_ITERATION_COUNT = 16


def assign(spec: CoordinatorSpec) -> dict[str, Assignment]:
    """``UniformAssignor.assign``: each member's new target assignment (members the builder
    leaves out of its answer are absent).

    Raises
    ------
    JavaAssignorFailure
        Where Kafka's builder throws ``PartitionAssignorException``.
    """
    if not spec.member_ids:
        return {}
    if spec.homogeneous:
        return _Homogeneous(spec).build()
    return _Heterogeneous(spec).build()


def deep_copy(assignment: Assignment) -> Assignment:
    """``AssignorHelpers.deepCopyAssignment``: ``new HashMap<>(size)`` of ``new HashSet<>(set)``."""
    copy: Assignment = JavaHashMap(topic_hash, len(assignment))
    for topic, partitions in assignment.items():
        copy.put(topic, new_partition_set(partitions))
    return copy


def _missing(topic: TopicId) -> JavaAssignorFailure:
    return JavaAssignorFailure(f"PartitionAssignorException: Members are subscribed to topic {topic} which doesn't "
                               "exist in the topic metadata.")


class _Builder:
    """What both builders share: the target assignment, where a member keeps the map it came
    with until the builder alters it, and is then given a deep copy once (Kafka checks
    ``isImmutableMap`` before every change)."""

    def __init__(self, spec: CoordinatorSpec) -> None:
        self.spec = spec
        self.target: dict[str, Assignment] = {}
        self.copied: set[str] = set()

    def _copy_of(self, member: str) -> Assignment:
        if member not in self.copied:
            self.copied.add(member)
            self.target[member] = deep_copy(self.target[member])
        return self.target[member]


class _Homogeneous(_Builder):
    def __init__(self, spec: CoordinatorSpec) -> None:
        super().__init__(spec)
        # new HashSet<>(the first member's subscribed ids)
        self.subscribed = JavaHashMap.copy_of(spec.subscriptions[spec.member_ids[0]], topic_hash)
        self.unfilled: list[tuple[str, int]] = []
        self.unassigned: list[tuple[TopicId, int]] = []

    def build(self) -> dict[str, Assignment]:
        spec = self.spec
        if not len(self.subscribed):
            return {}
        # groupSpec.isPartitionAssigned: a look-up, no iteration order needed
        assigned = {(t, p) for a in spec.assignments.values() for t, ps in a.unordered().items()
                    for p in (ps.unordered() if ps is not None else ())}
        total = 0
        for topic in self.subscribed:
            count = spec.partitions.get(topic, -1)
            if count == -1:
                raise _missing(topic)
            self.unassigned.extend((topic, p) for p in range(count) if (topic, p) not in assigned)
            total += count
        members = len(spec.member_ids)
        self.minimum, self.extra = divmod(total, members)
        self._revoke()
        self._assign_remaining()
        return self.target

    def _revoke(self) -> None:
        member_count = len(self.spec.member_ids)
        for index, member in enumerate(self.spec.member_ids):
            old = self.spec.assignments[member]
            self.target[member] = old
            quota, has_extra = self.minimum, False
            if self.extra > 0:
                quota, has_extra = quota + 1, True
            for topic, partitions in list(old.items()):
                if topic in self.subscribed:
                    if len(partitions) <= quota:
                        quota -= len(partitions)
                        continue
                    for partition in list(partitions):
                        if quota > 0:
                            quota -= 1
                            continue
                        new = self._copy_of(member)
                        kept = new.get(topic)
                        assert kept is not None
                        kept.remove(partition)
                        if not len(kept):
                            new.remove(topic)
                        self.unassigned.append((topic, partition))
                else:
                    self._copy_of(member).remove(topic)
            # KAFKA-18688: a member already at the minimum gives its claim on an extra partition
            # up to a later member, unless it is one of the last members that must take one.
            if quota > 0 and has_extra and member_count - index > self.extra:
                quota, has_extra = quota - 1, False
            if quota > 0:
                self.unfilled.append((member, quota))
            if has_extra:
                self.extra -= 1

    def _assign_remaining(self) -> None:
        next_index = 0
        for member, quota in self.unfilled:
            assignment = self._copy_of(member)
            for _ in range(quota):
                if next_index >= len(self.unassigned):
                    break
                topic, partition = self.unassigned[next_index]
                next_index += 1
                assignment.compute_if_absent(topic, _new_set).put(partition)
        if next_index < len(self.unassigned):
            raise JavaAssignorFailure("PartitionAssignorException: Partitions were left unassigned")


def _new_set() -> PartitionSet:
    return JavaHashMap(integer_hash)


class _Heterogeneous(_Builder):
    def __init__(self, spec: CoordinatorSpec) -> None:
        super().__init__(spec)
        self.members = list(spec.member_ids)
        self.index = {m: i for i, m in enumerate(self.members)}
        self.subscribers: dict[TopicId, list[int]] = {}
        for i, member in enumerate(self.members):
            for topic in spec.subscriptions[member]:
                if spec.partitions.get(topic, -1) == -1:
                    raise _missing(topic)
                self.subscribers.setdefault(topic, []).append(i)
        self.sizes = [0] * len(self.members)
        self.owners = {t: [-1] * spec.partitions[t] for t in self.subscribers}

    def _topic_key(self, topic: TopicId) -> tuple[float, int, TopicId]:
        subscribers = len(self.subscribers[topic])
        # partitions per subscriber descending (a double, as Java compares it), then subscriber
        # count ascending, then Uuid.compareTo (signed halves)
        return (-(self.spec.partitions[topic] / subscribers), subscribers, topic)

    def build(self) -> dict[str, Assignment]:
        if not self.subscribers:
            return {}
        self._revoke()
        unassigned = {t: [p for p, o in enumerate(owners) if o == -1] for t, owners in self.owners.items()}
        self._assign_remaining({t: ps for t, ps in unassigned.items() if ps})
        self._balance()
        return self.target

    def _revoke(self) -> None:
        for member in self.spec.member_ids:
            i = self.index[member]
            old = self.spec.assignments[member]
            self.target[member] = old
            subscribed = set(self.spec.subscriptions[member])
            for topic, partitions in list(old.items()):
                if topic in subscribed:
                    self.sizes[i] += len(partitions)
                    owners = self.owners[topic]
                    for p in partitions:
                        owners[p] = i
                else:
                    self._copy_of(member).remove(topic)

    def _assign_remaining(self, partitions: dict[TopicId, list[int]]) -> None:
        balancer = _Balancer(self.sizes)
        for topic in sorted(partitions, key=self._topic_key):
            balancer.initialize(self.subscribers[topic])
            for p in partitions[topic]:
                self._assign(topic, p, balancer.next_least_loaded())

    def _balance(self) -> None:
        topics = [t for t in self.subscribers if len(self.subscribers[t]) >= 2]
        if not topics:
            return
        ordered = sorted(topics, key=self._topic_key)
        last = -1
        balancer = _Balancer(self.sizes)
        for _ in range(MAX_ITERATION_COUNT):
            for index, topic in enumerate(ordered):
                if index == last:
                    return
                moved = self._balance_topic(topic, balancer)
                if moved > 0 or last == -1:
                    last = index

    def _balance_topic(self, topic: TopicId, balancer: _Balancer) -> int:
        moved = 0
        if balancer.initialize(self.subscribers[topic]) <= 1:
            return moved
        owners = self.owners[topic]
        partitions = sorted(range(len(owners)), key=owners.__getitem__)  # stable: by (owner, partition)
        start: dict[int, int] = {}
        end: dict[int, int] = {}
        for i, p in enumerate(partitions):
            start.setdefault(owners[p], i)
            end[owners[p]] = i + 1
        while not balancer.is_balanced():
            most = -1
            while True:
                most = balancer.next_most_loaded()
                if most == -1:
                    break
                if most not in end or end[most] - start[most] <= 0:
                    balancer.exclude_most_loaded()
                    continue
                break
            if most == -1:
                break
            partition = partitions[end[most] - 1]
            end[most] -= 1
            least = balancer.next_least_loaded()
            if balancer.is_balanced():
                break
            self._assign(topic, partition, least)
            moved += 1
        return moved

    def _assign(self, topic: TopicId, partition: int, member: int) -> None:
        owners = self.owners[topic]
        old = owners[partition]
        if old != -1:
            assignment = self._copy_of(self.members[old])
            kept = assignment.get(topic)
            if kept is not None:
                kept.remove(partition)
                if not len(kept):
                    assignment.remove(topic)
            owners[partition] = -1
            self.sizes[old] -= 1
        assignment = self._copy_of(self.members[member])
        count, subscribers = self.spec.partitions[topic], len(self.subscribers[topic])
        estimate = (count + subscribers - 1) // subscribers
        make: Callable[[], PartitionSet] = lambda: JavaHashMap(integer_hash, float_capacity(estimate))  # noqa: E731
        assignment.compute_if_absent(topic, make).put(partition)
        owners[partition] = member
        self.sizes[member] += 1


class _Balancer:
    """``MemberAssignmentBalancer``: two ranges over the subscribers sorted by load, the least
    loaded growing rightwards and the most loaded leftwards."""

    def __init__(self, sizes: list[int]) -> None:
        self.sizes = sizes
        self.sorted: list[int] = []
        self.least_end = 0
        self.least_count = -1
        self.next_least = 0
        self.most_start = 0
        self.most_end = 0
        self.most_count = 1
        self.next_most = -1

    def initialize(self, members: list[int]) -> int:
        sizes = self.sizes
        # by (size, index): `members` come in index order and the sort is stable
        self.sorted = sorted(members, key=sizes.__getitem__)
        first, last = self.sorted[0], self.sorted[-1]
        self.least_end, self.least_count, self.next_least = 0, sizes[first] - 1, 0
        n = len(self.sorted)
        self.most_start, self.most_end, self.most_count, self.next_most = n, n, sizes[last] + 1, n - 1
        return sizes[last] - sizes[first]

    def next_least_loaded(self) -> int:
        if self.next_least >= self.least_end:
            self.least_count += 1
            while self.least_end < len(self.sorted) and self.sizes[self.sorted[self.least_end]] == self.least_count:
                self.least_end += 1
            self.next_least = 0
        member = self.sorted[self.next_least]
        self.next_least += 1
        return member

    def next_most_loaded(self) -> int:
        if self.next_most < self.most_start:
            if self.most_end <= self.most_start and self.most_start > 0:
                self.most_count = self.sizes[self.sorted[self.most_start - 1]]
            else:
                self.most_count -= 1
            while self.most_start > 0 and self.sizes[self.sorted[self.most_start - 1]] == self.most_count:
                self.most_start -= 1
            self.next_most = self.most_end - 1
        if self.next_most < 0:
            return -1
        member = self.sorted[self.next_most]
        self.next_most -= 1
        return member

    def exclude_most_loaded(self) -> None:
        member = self.sorted[self.next_most + 1]
        self.sorted[self.next_most + 1] = self.sorted[self.most_end - 1]
        self.sorted[self.most_end - 1] = member
        self.most_end -= 1

    def is_balanced(self) -> bool:
        return self.most_count - self.least_count <= 1
