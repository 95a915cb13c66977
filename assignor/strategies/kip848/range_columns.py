"""The broker's ``range`` assignor (`range.assign`) on arrays: the same plan, every member's
partitions in the same order; the plain model stays the reference, and a property test holds
the two equal.

``range`` never reads the current assignment, so the plan is arithmetic: each topic's
partitions are cut into contiguous slices over its subscribers sorted by member id, and a member
lists its topics in the order of its map (``new HashMap<>((int) (topics / 0.75f) + 1)``, one
``put`` per topic it got a slice of, in its subscription's order), each slice ascending. The
map's size is fixed by the member's subscription, so a subscription's topic order is worked out
once. `assign` answers None where a member's map could hold nine topics in one bin (Java grows
a table of fewer than 64 buckets early, `JavaHashMap._crowded`, and makes the bin of a larger one a
tree, `tree_bin`) or where static members sort first
(a member with a ``group_instance_id``: the model orders them, `range.sorted_members`).
"""

from __future__ import annotations

import numpy as np

from assignor._arrays import gc_paused, ranges, stable_order
from assignor.java_hash import float_capacity, table_size_for
from assignor.model import Claims, Group, TopicPartition, topic_partitions_at
from assignor.ordering import java_order
from assignor.strategies.kip848.coordinator import is_homogeneous, spread_topic_hashes, subscription_order
from assignor.strategies.kip848.current_columns import Rows, as_claims, per_member
from assignor.topic_ids import topic_ids_of

__all__ = ["assign", "columns"]


def assign(group: Group) -> dict[str, list[TopicPartition]] | None:
    """Each member's new target assignment (``group.members`` order), as
    `assignor.strategies.kip848.range` plans it; None where this path does not apply.

    Examples
    --------
    >>> from assignor import Group, Member
    >>> group = Group({"t0000": 5}, [Member(m, ["t0000"]) for m in ("b", "a")])
    >>> {m: [tp.partition for tp in tps] for m, tps in assign(group).items()}
    {'b': [3, 4], 'a': [0, 1, 2]}
    """
    found = _target(group)
    if found is None:
        return None
    sorted_index, (member, topic, part), names = found
    with gc_paused():  # lists of acyclic tuples: nothing for the collector to find
        return per_member(group.members, sorted_index, member, topic_partitions_at(names, topic, part))


def columns(group: Group, owned: Claims | None, hashes: dict[str, int] | None = None) -> Claims | None:
    """`assign` as `Claims` (member index in ``group.members`` order, each member's rows in
    Kafka's order); `owned` is not read (``range`` never reads the current assignment), nor
    `hashes` (its members go in member id order)."""
    found = _target(group)
    if found is None:
        return None
    sorted_index, (member, topic, part), names = found
    return as_claims(sorted_index, Rows(member, topic, part, member), names)


def _target(group: Group) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray, np.ndarray], list[str]] | None:
    """Each member's rank in sorted order, the plan's rows (member rank, topic, partition; by
    rank) and the topic names the rows index."""
    members = group.members
    if not members or any(m.group_instance_id is not None for m in members):
        return None
    names = list(group.topics)
    index = {name: i for i, name in enumerate(names)}
    ids = topic_ids_of(names, group.topic_ids)
    hashes = spread_topic_hashes(ids[name] for name in names)
    counts = np.array([group.topics[name] for name in names], dtype=np.int64)
    order = java_order([m.id for m in members])  # RangeAssignor.sortMemberIds (no static member here)
    distinct: dict[tuple[str, ...], int] = {}
    subscription_of = np.array([distinct.setdefault(tuple(members[i].topics), len(distinct)) for i in order],
                               dtype=np.int64)
    resolved = [np.array(subscription_order(topics, index), dtype=np.int64) for topics in distinct]
    found = [_topic_places(topics, hashes) for topics in resolved]
    places = [p for p in found if p is not None]
    if len(places) < len(found):
        return None
    members_of = np.bincount(subscription_of, minlength=len(distinct)).tolist()
    if is_homogeneous(zip(distinct, members_of), len(members)):
        rows = _homogeneous_rows(resolved[subscription_of[0]], places[subscription_of[0]], counts, len(members))
    else:
        rows = _heterogeneous_rows(resolved, places, subscription_of, counts)
    sorted_index = np.empty(len(members), dtype=np.int64)
    sorted_index[order] = np.arange(len(members))
    return sorted_index, rows, names


def _topic_places(topics: np.ndarray, hashes: np.ndarray) -> np.ndarray | None:
    """Each topic's place in the map of a member subscribed to `topics` (bucket, then put
    order); None where nine of them share a bin (a small table grows early, a large one makes
    the bin a tree: `tree_bin`)."""
    capacity = table_size_for(float_capacity(len(topics)))
    bucket = hashes[topics] & (capacity - 1)
    if len(topics) > 8 and np.bincount(bucket).max() > 8:
        return None
    places = np.empty(len(topics), dtype=np.int64)
    places[np.lexsort((np.arange(len(topics)), bucket))] = np.arange(len(topics))
    return places


def _expanded(member: np.ndarray, topic: np.ndarray, start: np.ndarray,
              length: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Slices (in order) as rows: member, topic, partition."""
    return member.repeat(length), topic.repeat(length), ranges(start, length)


def _slices(rank: np.ndarray, topic: np.ndarray, counts: np.ndarray,
            takers: np.ndarray | int) -> tuple[np.ndarray, np.ndarray]:
    """The slice of the `rank`-th of `takers` sorted subscribers of `topic` (of `counts`
    partitions per topic): the first ``count % takers`` get one more. Divided once per topic."""
    minimum, extra = np.divmod(counts, np.maximum(takers, 1))
    minimum, extra = minimum[topic], extra[topic]
    length = minimum + (rank < extra)
    return rank * minimum + np.minimum(rank, extra), length


def _homogeneous_rows(topics: np.ndarray, places: np.ndarray, counts: np.ndarray,
                      members: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every member subscribes to `topics`: topic by topic each is cut over all members, and every
    member's map iterates its topics in one order."""
    in_place = topics[places.argsort()]
    count = counts[in_place]
    # members beyond the partition count get nothing of a topic
    takers = np.where(count >= members, members, count)
    pair_topic = in_place.repeat(takers)
    first = np.zeros(len(takers), dtype=np.int64)
    takers[:-1].cumsum(out=first[1:])
    rank = np.arange(int(takers.sum()), dtype=np.int64) - first.repeat(takers)
    start, length = _slices(rank, pair_topic, counts, members)
    by_member = stable_order(rank)  # topics stay in map order within a member
    return _expanded(rank[by_member], pair_topic[by_member], start[by_member], length[by_member])


def _heterogeneous_rows(resolved: list[np.ndarray], places: list[np.ndarray], subscription_of: np.ndarray,
                        counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each topic cut over its own subscribers, in member order; each member's topics in its
    subscription's map order: on a members x topics table where subscriptions cover a quarter
    of it (a sort of the subscribed pairs where they are sparse; the two agree, a test holds)."""
    pairs = int(np.array([len(t) for t in resolved], dtype=np.int64)[subscription_of].sum())
    cells = len(subscription_of) * len(counts)
    if cells <= _DENSE_CELLS and cells <= 4 * pairs:
        return _dense_rows(resolved, places, subscription_of, counts)
    return _sorted_rows(resolved, places, subscription_of, counts)


#: The largest members x topics table `_heterogeneous_rows` builds (16 MiB of int32 ranks).
_DENSE_CELLS = 1 << 22


def _dense_rows(resolved: list[np.ndarray], places: list[np.ndarray], subscription_of: np.ndarray,
                counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`_heterogeneous_rows` on a members x topics table: a member's rank among a topic's
    subscribers is the running count of subscribers down the topic's column."""
    topics = len(counts)
    contains = np.zeros((len(resolved), topics), dtype=bool)
    place_of = np.zeros((len(resolved), topics), dtype=np.int64)
    for d, (subscribed_to, place) in enumerate(zip(resolved, places)):
        contains[d, subscribed_to] = True
        place_of[d, subscribed_to] = place
    subscribed = contains[subscription_of]
    rank = subscribed.cumsum(axis=0, dtype=np.int32)
    subscribers = rank[-1].astype(np.int64)
    rank -= 1
    minimum, extra = np.divmod(counts, np.maximum(subscribers, 1))
    takers = np.where(minimum > 0, subscribers, extra)  # the ranks that get a slice
    member, topic = (subscribed & (rank < takers)).nonzero()
    in_place = np.lexsort((place_of[subscription_of[member], topic], member))
    member, topic = member[in_place], topic[in_place]
    start, length = _slices(rank[member, topic].astype(np.int64), topic, counts, subscribers)
    return _expanded(member, topic, start, length)


def _sorted_rows(resolved: list[np.ndarray], places: list[np.ndarray], subscription_of: np.ndarray,
                 counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`_heterogeneous_rows` on the subscribed pairs: a member's rank among a topic's subscribers
    from the pairs sorted by topic (members stay in order within one)."""
    in_place = [topics[place.argsort()] for topics, place in zip(resolved, places)]  # a map's order, once
    sizes = np.array([len(t) for t in resolved], dtype=np.int64)[subscription_of]
    member = np.arange(len(subscription_of), dtype=np.int64).repeat(sizes)
    topic = np.concatenate([in_place[d] for d in subscription_of.tolist()] or [np.empty(0, dtype=np.int64)])
    by_topic = stable_order(topic)
    subscribers = np.bincount(topic, minlength=len(counts))
    first = np.zeros(len(counts), dtype=np.int64)
    subscribers[:-1].cumsum(out=first[1:])
    rank = np.empty(len(topic), dtype=np.int64)
    rank[by_topic] = np.arange(len(topic), dtype=np.int64) - first[topic[by_topic]]
    start, length = _slices(rank, topic, counts, subscribers)
    taking = length > 0
    return _expanded(member[taking], topic[taking], start[taking], length[taking])
