"""Java's ``ConstrainedAssignmentBuilder``: the builder for groups whose members all subscribe to
the same topics (KAFKA-9987). Quotas are ``floor`` and ``ceil`` of partitions per member;
members keep what they own up to their quota, then round-robin fills the rest.

Steps, as Java runs them:

1. `_keep_owned`: in HashMap order, each member keeps its owned partitions (sorted by partition,
   then topic) up to minQuota, or up to maxQuota while fewer members than ``total % members``
   have more than minQuota; the rest, and with racks the owned partitions on another rack, may
   be revoked (KAFKA-15170: a cooperative leader withholds them when they go to another member,
   not when they come back to their owner later).
2. `_unassigned`: every other partition, by topic then partition (Java's two-pointer walk,
   including what it does with a claim of a partition the topic does not have).
3. `_fill_near` (KIP-881): round-robin within racks, when rack-aware assignment applies,
   counting the members it fills to maxQuota (KAFKA-15170: once enough are, the members at
   minQuota are full).
4. `_fill`: round-robin over the members under minQuota, then one more each to members at
   exactly minQuota until enough members hold maxQuota.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import filterfalse, repeat
from operator import itemgetter

from assignor.errors import JavaAssignorFailure
from assignor.model import TopicPartition
from assignor.ordering import java_key, java_sorted
from assignor.strategies.java_sticky import columns
from assignor.strategies.java_sticky.columns import Marks, claimed, every_partition, unclaimed
from assignor.strategies.java_sticky.racks import RackInfo

__all__ = ["build"]


class _Builder:
    def __init__(self, topics: dict[str, int], owned: dict[str, list[TopicPartition]],
                 claimed_by_several: set[TopicPartition], racks: RackInfo, plain: bool, claims: Marks | None) -> None:
        # `plain`: Java's steps as Java writes them, the reference `_deal_rounds` and the set
        # difference in `_unassigned` are held to by the property tests.
        self.plain = plain
        self.topics = topics
        self.owned = owned
        #: Every partition of `owned` marked (`columns.claimed`), when a large group's were.
        self.claims = claims
        self.several = claimed_by_several
        self.racks = racks
        self.total = sum(topics.values())
        members = len(owned)
        self.min_quota = self.total // members
        self.max_quota = -(-self.total // members)
        self.expected_over_min = self.total % members
        self.over_min = 0
        self.under_min: list[str] = []
        self.at_min: list[str] = []
        #: Owned partitions not kept (over quota, or on another rack), with their owner: given
        #: to anyone else they change hands (KAFKA-15170, apache/kafka PR #13965).
        self.maybe_revoked: dict[TopicPartition, str] = {}
        self.assignment: dict[str, list[TopicPartition]] = {m: [] for m in owned}
        self.assigned: list[TopicPartition] = []
        self.transferring: dict[TopicPartition, str] = {}
        #: A kept claim names a partition its topic does not have: Java's plan may then hold a
        #: partition twice or one that does not exist (the caller checks the plan).
        self.impossible = False

    def build(self) -> dict[str, list[TopicPartition]]:
        self._keep_owned()
        unassigned = self._unassigned()
        self.under_min.sort(key=java_key)
        self.at_min.sort(key=java_key)
        unassigned = self.racks.by_members_near(unassigned)
        unassigned = self._fill_near(unassigned)
        self._fill(unassigned)
        self._check_filled()
        return self.assignment

    def _keep_owned(self) -> None:
        by_partition = _by_partition_then_topic(self.topics)
        racks = self.racks.member_rack
        for member, claims in self.owned.items():
            if racks:
                elsewhere = [tp for tp in claims if self.racks.mismatch(member, tp)]
                if elsewhere:
                    self.maybe_revoked.update(zip(elsewhere, repeat(member)))
                    claims = [tp for tp in claims if not self.racks.mismatch(member, tp)]
            mine = sorted(claims, key=by_partition)
            if self.several:
                mine = [tp for tp in mine if tp not in self.several]
            target = self.assignment[member]
            if len(mine) < self.min_quota:
                target.extend(mine)
                self.assigned.extend(mine)
                self.under_min.append(member)
            elif len(mine) >= self.max_quota and self.over_min < self.expected_over_min:
                self.over_min += 1
                if self.over_min == self.expected_over_min:
                    self.at_min.clear()
                target.extend(mine[: self.max_quota])
                self.assigned.extend(mine[: self.max_quota])
                self.maybe_revoked.update(zip(mine[self.max_quota:], repeat(member)))
            else:
                target.extend(mine[: self.min_quota])
                self.assigned.extend(mine[: self.min_quota])
                self.maybe_revoked.update(zip(mine[self.min_quota:], repeat(member)))
                if self.over_min < self.expected_over_min:
                    self.at_min.append(member)

    def _unassigned(self) -> list[TopicPartition]:
        """Every partition by topic then partition, skipping the assigned ones the way Java's
        two-pointer walk does: a kept claim the topic does not have (partition >= count) stops
        the skipping, and every later partition counts as unassigned too."""
        order = java_sorted(self.topics)
        if not self.assigned:
            return every_partition(order, self.topics)
        if not self.plain:
            # In columns (`columns`): every kept claim a real partition, none twice. Kept is
            # what was claimed less what was not kept, where the claims were marked already.
            rest = None
            if self.claims is not None and not self.several:
                rest = unclaimed(self.claims, order, self.topics, self.maybe_revoked)
            elif len(self.assigned) >= columns.COLUMNS_FROM:
                marks = claimed([self.assigned], order, self.topics)
                rest = None if marks is None or marks is False else unclaimed(marks, order, self.topics)
            if rest is not None:
                return rest
        every = every_partition(order, self.topics)
        # With every kept claim a real partition, the walk below skips exactly the kept ones.
        kept_set = set(self.assigned)
        skipped = list(filterfalse(kept_set.__contains__, every))
        self.impossible = not len(every) - len(skipped) == len(kept_set) == len(self.assigned)
        if not (self.impossible or self.plain):
            return skipped
        ascii_names = all(map(str.isascii, self.topics))
        kept = sorted(self.assigned) if ascii_names else sorted(
            self.assigned, key=lambda tp: (java_key(tp.topic), tp.partition))
        unassigned: list[TopicPartition] = []
        position, stalled = 0, False
        for topic in order:
            for p in range(self.topics[topic]):
                nxt = kept[position]
                if stalled or not (nxt.topic == topic and nxt.partition == p):
                    unassigned.append(TopicPartition(topic, p))
                elif position + 1 < len(kept):
                    position += 1
                else:
                    stalled = True
        return unassigned

    def _fill_near(self, unassigned: list[TopicPartition]) -> list[TopicPartition]:
        if not self.racks.member_rack:
            return unassigned
        left: list[TopicPartition] = []
        next_index = 0
        for tp in unassigned:
            member = None
            index = self.racks.next_near(tp, self.under_min, next_index)
            if index >= 0:
                member = self.under_min[index]
                count = len(self.assignment[member]) + 1
                if count >= self.min_quota:
                    self.under_min.remove(member)
                    if count < self.max_quota and self.over_min < self.expected_over_min:
                        self.at_min.append(member)
                else:
                    index += 1
                next_index = index % len(self.under_min) if self.under_min else 0
            elif self.at_min:
                first = self.racks.next_near(tp, self.at_min, 0)
                if first >= 0:
                    member = self.at_min[first]
                    if len(self.assignment[member]) + 1 == self.max_quota:
                        del self.at_min[first]
                        self.over_min += 1
                        if self.over_min == self.expected_over_min:
                            self.at_min.clear()  # every member at minQuota is now full
            if member is None:
                left.append(tp)
            else:
                self._give(tp, member)
        return left

    def _fill(self, unassigned: list[TopicPartition]) -> None:
        # Java walks `under_min` with one list iterator: `cursor` is the index of the next member
        # it returns, `last` the index it returned last (what ``Iterator.remove`` removes). At the
        # start of a pass where every member still needs two or more, the passes before the
        # first member fills up are dealt out a whole pass at a time (`_deal_rounds`): the same
        # partitions to the same members, a slice per member instead of a step per partition.
        cursor = position = retry_at = 0
        while position < len(unassigned):
            if cursor == 0 and self.under_min and position >= retry_at and not self.plain:
                dealt = self._deal_rounds(unassigned, position)
                if dealt:
                    position += dealt
                    continue
                retry_at = position + len(self.under_min)  # not before the next whole pass
            tp = unassigned[position]
            position += 1
            last: int | None
            if cursor < len(self.under_min):
                member, last = self.under_min[cursor], cursor
                cursor += 1
            elif not self.under_min and not self.at_min:
                raise JavaAssignorFailure(
                    "Java's constrained builder throws IllegalStateException (\"No more unfilled consumers to be "
                    "assigned.\"): more partitions than places, which happens when a member's claim names a "
                    "partition its topic does not have")
            elif not self.under_min:
                member, last = self.at_min.pop(0), None
            else:
                member, last, cursor = self.under_min[0], 0, 1
            count = self._give(tp, member)
            if count == self.min_quota and last is not None:
                del self.under_min[last]
                cursor = last
                self.at_min.append(member)
            elif count == self.max_quota:
                self.over_min += 1

    def _deal_rounds(self, unassigned: list[TopicPartition], position: int) -> int:
        """Whole passes over `under_min` from `position` while no member reaches minQuota (no
        member leaves the list, nothing else changes); how many partitions that dealt."""
        members = self.under_min
        need = min(self.min_quota - len(self.assignment[m]) for m in members)
        rounds = min(need - 1, (len(unassigned) - position) // len(members))
        if rounds <= 0:
            return 0
        width, end = len(members), position + rounds * len(members)
        watched = self.maybe_revoked or self.several
        for j, member in enumerate(members):
            dealt = unassigned[position + j : end : width]
            self.assignment[member].extend(dealt)
            if watched:
                for tp in dealt:
                    self._watch(tp, member)
        return rounds * width

    def _give(self, tp: TopicPartition, member: str) -> int:
        target = self.assignment[member]
        target.append(tp)
        self._watch(tp, member)
        return len(target)

    def _watch(self, tp: TopicPartition, member: str) -> None:
        """Record `tp` as changing hands when another member may still own it: one it did not
        keep, or one claimed by several in the same generation."""
        owner = self.maybe_revoked.get(tp)
        if (owner is not None and owner != member) or tp in self.several:
            self.transferring[tp] = member

    def _check_filled(self) -> None:
        if not self.under_min:
            return
        if self.over_min != self.expected_over_min:
            raise JavaAssignorFailure(
                "Java's constrained builder throws IllegalStateException (\"We haven't reached the expected number "
                "of members with more than the minQuota partitions, but no more partitions to be assigned\")")
        for member in self.under_min:
            if len(self.assignment[member]) != self.min_quota:
                raise JavaAssignorFailure(
                    f"Java's constrained builder throws IllegalStateException (\"Consumer: [{member}] doesn't "
                    "reach minQuota partitions, and no more partitions to be assigned\")")


def _by_partition_then_topic(topics: dict[str, int]) -> Callable[[TopicPartition], tuple[object, ...]]:
    """Sort key: partition, then topic in Java's String order (plain for ASCII names)."""
    if all(map(str.isascii, topics)):
        return itemgetter(1, 0)
    return lambda tp: (tp.partition, java_key(tp.topic))


def build(topics: dict[str, int], owned: dict[str, list[TopicPartition]], claimed_by_several: set[TopicPartition],
          racks: RackInfo, plain: bool = False, claims: Marks | None = None
          ) -> tuple[dict[str, list[TopicPartition]], dict[TopicPartition, str], bool]:
    """The constrained plan, the partitions it hands from one member to another (which a
    cooperative leader withholds this round, KIP-429), and whether a kept claim named a
    partition that does not exist. `claims`: every partition of `owned` marked, where
    `member_data.read_claims` marked them."""
    builder = _Builder(topics, owned, claimed_by_several, racks, plain, claims)
    return builder.build(), builder.transferring, builder.impossible
