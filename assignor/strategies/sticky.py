"""The eager ``sticky`` strategy (KIP-54, with KIP-341 generations).

Steps, each a private helper:

1. `dense.build`: dense numbering; drop invalid claims and resolve conflicting ones (KIP-341).
2. `_topic_classes`: group topics by subscriber set; partitions of one class are interchangeable.
   With racks (KIP-881), `_split_by_racks` splits classes by the replica racks of partitions.
3. Counts per class and member: `_uniform_counts` when one class covers everybody (closed form),
   otherwise `assignor.solver.balance.solve` (global optimum, then fewest moves).
4. `_materialize`: turn counts into partitions, keeping owned partitions first, a partition
   that must move going back to its most recent earlier owner where that member takes one of
   its class (KIP-341), and dealing the rest round-robin so each topic spreads over the members
   (KAFKA-16277).
"""

from __future__ import annotations

import numpy as np

from assignor._arrays import filled, ranges, run_starts, stable_order
from assignor.model import Claims, Group, Plan
from assignor.protocols import STICKY
from assignor.solver import balance, dense, racks
from assignor.strategies.strategy import Strategy, stateless

try:  # the deal in C (assignor/solver/_deal.c); a build without a compiler lacks it
    import assignor.solver._deal as _compiled
except ImportError:  # then `_deal_plainly` serves
    _compiled = None  # type: ignore[assignment]

__all__ = ["STRATEGY", "assign", "plan_owners"]



def assign(group: Group) -> Plan:
    """Plan a sticky assignment: as balanced as possible, then moving as little as possible.

    Examples
    --------
    >>> from assignor import Group, Member, TopicPartition as TP
    >>> group = Group(topics={"t": 4}, members=[
    ...     Member("a", ["t"], owned=[TP("t", 0), TP("t", 1), TP("t", 2), TP("t", 3)], generation=1),
    ...     Member("b", ["t"])])
    >>> plan = assign(group)
    >>> [tp.partition for tp in plan.assignment["a"]], [tp.partition for tp in plan.assignment["b"]]
    ([0, 1], [2, 3])
    """
    layout, owner = plan_owners(group)
    return Plan(STRATEGY.name, layout.assignment(owner))


def plan_owners(group: Group, claims: Claims | None = None, memo: dense.PlanMemo | None = None
                ) -> tuple[dense.Layout, np.ndarray]:
    """The sticky plan as the layout and the owner (member index) of every flat partition;
    owned partitions from `claims` when given (see `dense.build`)."""
    layout = dense.build(group, claims, memo)
    class_of_topic, eligible = _topic_classes(layout, memo)
    class_of_flat = class_of_topic[layout.topic_of_flat()]
    local = None
    if racks.applies(group):
        class_of_flat, eligible, local = _split_by_racks(group, layout, class_of_flat, eligible)
    owned = _class_counts(layout, class_of_flat, eligible)
    used = class_of_flat >= 0
    sizes = np.bincount(class_of_flat[used], minlength=len(eligible)).astype(np.int64)
    if len(eligible) == 1 and local is None:
        x = _uniform_counts(eligible[0], int(sizes[0]), owned[0])[None, :]
    else:
        x = balance.solve(eligible, sizes, owned, local)
    owner = _materialize(layout, class_of_flat, x, owned)
    if layout.earlier is not None and local is None:
        _return_to_earlier_owners(layout, owner)
    return layout, owner


def _return_to_earlier_owners(layout: dense.Layout, owner: np.ndarray) -> None:
    """KIP-341 across classes: `_materialize` sends a partition back to its most recent earlier
    owner within its class; across classes the counts can still give that member another
    partition `q` while the partition goes elsewhere. Swap the two where the holder can take
    `q` with no more moves (it kept both or neither): loads and moves stay, and each swap puts
    one more partition back with its earlier owner, so the loop ends. Not with racks (a swap
    could cost locality, which ranks first)."""
    earlier, prev = layout.earlier, layout.prev_owner
    assert earlier is not None
    topic = layout.topic_of_flat()
    subscribed = [set(d.tolist()) for d in layout.distinct]
    of = layout.subscription_of
    fresh: dict[int, list[int]] = {}  # per member, what it gets that is neither its own nor back
    for q in np.flatnonzero((owner >= 0) & (prev != owner) & (earlier != owner)).tolist():
        fresh.setdefault(int(owner[q]), []).append(q)
    changed = True
    while changed:
        changed = False
        for p in np.flatnonzero((earlier >= 0) & (owner >= 0) & (owner != earlier)).tolist():
            back, holder = int(earlier[p]), int(owner[p])
            options = fresh.get(back)
            if not options or topic[p] not in subscribed[of[back]]:
                continue
            kept = prev[p] == holder
            takes = subscribed[of[holder]]
            for i, q in enumerate(options):
                if topic[q] in takes and (prev[q] == holder) == kept:
                    owner[p], owner[q] = back, holder
                    options.pop(i)
                    if p in fresh.get(holder, ()):
                        fresh[holder].remove(p)
                    if prev[q] != holder and earlier[q] != holder:
                        fresh.setdefault(holder, []).append(q)
                    changed = True
                    break


def _split_by_racks(group: Group, layout: dense.Layout, class_of_flat: np.ndarray, eligible: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """KIP-881: split each class by replica racks, so that partitions of a class are alike for
    locality too; ``local[k, i]``: member i's rack holds a replica of class k's partitions."""
    signature, sets = dense.rack_signatures(group, layout)
    used = class_of_flat >= 0
    pairs = class_of_flat[used] * len(sets) + signature[used]
    classes, inverse = np.unique(pairs, return_inverse=True)
    split = np.full(layout.total, -1, dtype=np.int64)
    split[used] = inverse
    base, rack_set = classes // len(sets), classes % len(sets)
    member_racks = [m.rack for m in layout.members]
    on_rack = np.array([[rack in racks for rack in member_racks] for racks in sets], dtype=bool)
    on_rack = on_rack.reshape(len(sets), len(member_racks))
    return split, eligible[base], on_rack[rack_set] & eligible[base]


def _topic_classes(layout: dense.Layout, memo: dense.PlanMemo | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Class id per topic (-1: no partitions or no subscriber) and the (K, M) eligibility.

    With the `memo` `dense.build` kept, the classes are remembered: while the topic list
    stays (build clears the memo when it changes), a subscription is the same index array
    from one plan to the next, so the distinct subscriptions are known by identity (a group
    planned again and again would otherwise redo a loop over every topic each time)."""
    key = None
    if memo is not None:
        key = (tuple(map(id, layout.distinct)), (layout.counts > 0).tobytes())
        found = memo.topic_classes  # the last classes only: a bound on what is kept
        if found is not None and found[0] == key:
            return found[1], found[2][:, layout.subscription_of]
    topic, subscription = dense.distinct_pairs(layout)
    bounds = np.searchsorted(topic, np.arange(len(layout.topics) + 1)).tolist()
    # A topic's signature: the bytes of its run of distinct subscriptions (sliced from one bytes
    # object: a hundred topics cost a few microseconds, not a few numpy calls each).
    signature, width = subscription.tobytes(), subscription.itemsize
    signatures: dict[bytes, int] = {}
    first_topic: list[int] = []  # of each class
    classes = [-1] * len(layout.topics)
    for t, (start, end, has) in enumerate(zip(bounds[:-1], bounds[1:], (layout.counts > 0).tolist())):
        if has and start < end:
            k = classes[t] = signatures.setdefault(signature[start * width : end * width], len(signatures))
            if k == len(first_topic):
                first_topic.append(t)
    class_of_topic = np.array(classes, dtype=np.int64)
    # Class by distinct subscription first (few columns), then spread to the members.
    by_subscription = np.zeros((len(first_topic), len(layout.distinct)), dtype=bool)
    if first_topic:
        starts = np.array([bounds[t] for t in first_topic], dtype=np.int64)
        lengths = np.array([bounds[t + 1] for t in first_topic], dtype=np.int64) - starts
        by_subscription[np.repeat(np.arange(len(first_topic)), lengths), subscription[ranges(starts, lengths)]] = True
    if memo is not None and key is not None:
        # The entry holds the arrays themselves, so no other array can take their ids.
        memo.topic_classes = (key, class_of_topic, by_subscription, tuple(layout.distinct))
    return class_of_topic, by_subscription[:, layout.subscription_of]


def _class_counts(layout: dense.Layout, class_of_flat: np.ndarray, eligible: np.ndarray) -> np.ndarray:
    """owned[k, i]: partitions of class k that member i validly claims."""
    flats = (layout.prev_owner >= 0).nonzero()[0]
    k = class_of_flat[flats]
    cells = k * eligible.shape[1] + layout.prev_owner[flats]
    return np.bincount(cells, minlength=eligible.size).reshape(eligible.shape).astype(np.int64)


def _uniform_counts(eligible: np.ndarray, size: int, owned: np.ndarray) -> np.ndarray:
    """Everyone subscribes to the same topics: quotas floor/ceil(P/C), extra slots to keepers.

    Any load vector with ``P % C`` members at ceil and the rest at floor is optimal, and a member
    keeps ``min(owned, quota)``; giving the ceil slots first to members that own more than the
    floor maximises what is kept. So nothing moves when the group and its plan are unchanged.
    """
    members = eligible.nonzero()[0]
    floor, extra = divmod(size, len(members))
    ceil_slot = np.zeros(len(members), dtype=bool)
    keepers = (owned[members] > floor).nonzero()[0][:extra]
    ceil_slot[keepers] = True
    ceil_slot[(~ceil_slot).nonzero()[0][: extra - len(keepers)]] = True
    x = np.zeros(owned.shape, dtype=owned.dtype)
    x[members] = floor + ceil_slot
    return x


def _materialize(layout: dense.Layout, cls: np.ndarray, x: np.ndarray, owned: np.ndarray) -> np.ndarray:
    """Owner per flat partition realising the counts `x` (class `cls` per flat partition),
    keeping owned partitions first (`owned`: the valid claims per class and member)."""
    topic = layout.topic_of_flat()
    owner = filled(layout.total, dense.NO_OWNER)

    # Keep up to x[k, i] of the partitions member i owned in class k. When it must give some up,
    # keep a topic-spread subset: its first partition of each topic, then its second, ...; but
    # first give up those whose most recent earlier owner needs one of their class (KIP-341:
    # a partition that must move goes back to the member that held it before).
    flats = (layout.prev_owner >= 0).nonzero()[0]
    holder = layout.prev_owner[flats]
    over = owned > x
    kept_counts = np.minimum(owned, x)
    need = x - kept_counts
    earlier = layout.earlier
    if over.any():
        # Only the members over their count in some class rank what they hold there.
        giving = over[cls[flats], holder]
        owner[flats[~giving]] = holder[~giving]
        flats, holder = flats[giving], holder[giving]
        by_holder = np.lexsort((flats, holder))
        flats, holder = flats[by_holder], holder[by_holder]
        t = topic[flats]
        starts = run_starts(holder, t)
        rank = np.arange(len(flats)) - np.maximum.accumulate(np.where(starts, np.arange(len(flats)), 0))
        k = cls[flats]
        wanted = np.zeros(len(flats), dtype=np.int64)
        if earlier is not None:
            back = earlier[flats]
            has = (back >= 0) & (k >= 0)
            wanted[has] = need[k[has], back[has]] > 0
        order = np.lexsort((t, rank, wanted, k, holder))
        flats, holder, k = flats[order], holder[order], k[order]
        starts = run_starts(holder, k)
        position = np.arange(len(flats)) - np.maximum.accumulate(np.where(starts, np.arange(len(flats)), 0))
        kept = position < x[k, holder]
        owner[flats[kept]] = holder[kept]
    else:  # everyone keeps everything (a member left, say)
        owner[flats] = holder

    pool = ((owner < 0) & (cls >= 0)).nonzero()[0]
    if earlier is not None:  # back to the earlier owner where it needs one of the class
        back = earlier[pool]
        for p, e in zip(pool[back >= 0].tolist(), back[back >= 0].tolist()):
            k_p = cls[p]
            if need[k_p, e] > 0:
                owner[p] = e
                need[k_p, e] -= 1
        pool = pool[owner[pool] < 0]
    # Deal the rest class by class, round-robin over the members that still need partitions, in
    # topic then partition order: consecutive partitions of a topic go to different members.
    pool = pool[stable_order(cls[pool])]
    k, member = need.nonzero()
    dealt = _dealt(k, member, need[k, member], x.shape)
    if len(dealt) != len(pool):  # an invariant of the class counts (a check `python -O` keeps)
        raise RuntimeError(f"sticky: class counts cover {len(dealt)} partitions, {len(pool)} are unkept")
    owner[pool] = dealt
    return owner


def _dealt(k: np.ndarray, member: np.ndarray, n: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """The members in the order the deal serves them: class by class, round by round, in each
    round every member of the class that needs more than the round, in member order (`k`,
    `member`, `n`: each (class, member) pair that needs `n`, by class then member). In C where
    the package was built with a compiler (15 -> 3 ms at 1,000,000 partitions / 2,000 members),
    else by `_deal_plainly`, which a property test holds it to."""
    if _compiled is None:
        return _deal_plainly(k, member, n, shape)
    return np.frombuffer(_compiled.deal(*(np.ascontiguousarray(c, dtype=np.int64) for c in (k, member, n))),
                         dtype=np.int64)


def _deal_plainly(k: np.ndarray, member: np.ndarray, n: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """`_dealt` on numpy: a (class, round, member) triple per partition, sorted."""
    k_rep, member_rep = np.repeat(k, n), np.repeat(member, n)
    round_ = np.arange(len(k_rep)) - np.repeat(np.cumsum(n) - n, n)
    dealt: np.ndarray = member_rep[_deal_order(k_rep, round_, member_rep, shape)]
    return dealt


def _deal_order(k: np.ndarray, round_: np.ndarray, member: np.ndarray, shape: tuple[int, int],
                limit: int = 2**62) -> np.ndarray:
    """The order that sorts the (class, round, member) triples, all distinct, of the counts
    `shape` (classes, members), given by class, then member, then round (as `_materialize` lays
    them out): a stable sort of (class, round) alone then leaves each (class, round)'s members in
    order, one radix sort of a key below classes * rounds (`stable_order`; 17 -> 4 ms at
    1,000,000 / 2,000), unless that key could pass `limit` (no group that fits in memory comes
    near int64's), when the lexsort of all three does it."""
    rounds = int(round_.max(initial=0)) + 1
    if shape[0] * rounds < limit:
        return stable_order(k * rounds + round_)
    return np.lexsort((member, round_, k))


STRATEGY = Strategy(STICKY.name, STICKY, assign, stateless(plan_owners), earlier_owner_first=True)
