"""The order the group coordinator's member map iterates, which decides the order the broker's
assignors see members in wherever their ids share a bucket of the ``HashMap`` the target is
computed from.

A consumer group keeps its members in an ``org.apache.kafka.timeline.TimelineHashMap``
(``ModernGroup.members``, created empty), not a ``java.util.HashMap``. In Apache Kafka 4.3.1 that
is ``BaseHashTable``: an array of slots, 2 to start with (``expectedSizeToCapacity(0)``), doubled
before an insert would make it more than three quarters full, never shrunk. A key's slot is the top
``log2(slots)`` bits of ``hashCode * -7046029254386353131`` (``findSlot``: Knuth's multiplicative
hashing on the 64-bit product); a slot holds its keys in insertion order (``baseAddOrReplace``
appends, ``baseRemove`` closes the gap, a replaced key keeps its place; the load is checked
before the key is looked for, so a replacement can double the table too), and a doubling moves
every slot's keys, slot by slot in order, to the end of their new slots (``rehash``). The current
view iterates slot by slot, each slot's keys last first (``SnapshottableHashTable.CurrentIterator``
takes them from the end of the list it unpacked).

``TargetAssignmentBuilder.build`` puts every member into a ``HashMap`` in this order, then the
member whose heartbeat computes the target (a joining member is not in the map yet: its records
are replayed after the heartbeat). Converting a classic group, ``ConsumerGroup.fromClassicGroup``
fills a new map in the classic group's order (a ``java.util.HashMap`` of member ids), the target
is computed from that map, and the group the records rebuild fills its map in that map's order.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from assignor.ordering import string_hash

__all__ = ["MemberMap"]

#: ``BaseHashTable.findSlot``'s multiplier (Knuth's Fibonacci hashing), as a 64-bit pattern.
_KNUTH = -7046029254386353131 & 0xFFFF_FFFF_FFFF_FFFF


def _slot(key: str, slots: int) -> int:
    """``findSlot(key, slots)`` for a power-of-two `slots`: the product's top bits."""
    h = string_hash(key)
    signed = h - (1 << 32) if h & 0x8000_0000 else h  # the int hashCode, widened to long
    product = (signed * _KNUTH) & 0xFFFF_FFFF_FFFF_FFFF
    return product >> (65 - slots.bit_length())


class MemberMap:
    """A ``TimelineHashMap`` of member ids, as its current view iterates (module docstring).

    Examples
    --------
    >>> members = MemberMap(["a", "b", "c"])
    >>> members.remove("b")
    >>> members.put("d")
    >>> list(members) == [m for m in MemberMap(["a", "b", "c", "d"]) if m != "b"]
    True
    """

    def __init__(self, keys: Iterable[str] = ()) -> None:
        self._slots: list[list[str]] = [[], []]
        self._where: dict[str, int] = {}
        for key in keys:
            self.put(key)

    @classmethod
    def iterating(cls, keys: Iterable[str]) -> MemberMap:
        """A map that iterates in the order of `keys` (a group whose members are listed as the
        coordinator lists them), of the fewest slots its keys fit in, or twice as many (its size
        once a member has been updated: `put`); ValueError when neither iterates so."""
        keys = list(keys)
        slots = 2
        while len(keys) * 0.75 > slots:
            slots *= 2
        for size in (slots, 2 * slots):
            members = cls()
            members._slots = [[] for _ in range(size)]
            for key in reversed(keys):  # a slot iterates last first
                slot = _slot(key, size)
                members._slots[slot].append(key)
                members._where[key] = slot
            if [*members] == keys:
                return members
        raise ValueError("keys are not in an order such a map iterates (or repeat)")

    @classmethod
    def of(cls, keys: Iterable[str]) -> MemberMap:
        """`iterating` where `keys` are in an order a map iterates, else the map they make when
        put in their order (members listed in the order they joined)."""
        keys = list(keys)
        try:
            return cls.iterating(keys)
        except ValueError:
            return cls(keys)

    def __contains__(self, key: object) -> bool:
        return key in self._where

    def __len__(self) -> int:
        return len(self._where)

    def __iter__(self) -> Iterator[str]:
        for keys in self._slots:
            yield from reversed(keys)

    def put(self, key: str) -> None:
        """Add `key`, or replace it (an update of the member: it keeps its place). Either may
        first double the table: ``baseAddOrReplace`` checks the load before it looks for the
        key, so updating a member of a group at the threshold grows the table too."""
        if (len(self._where) + 1) * 0.75 > len(self._slots):
            self._rehash(2 * len(self._slots))
        if key in self._where:
            return
        slot = _slot(key, len(self._slots))
        self._slots[slot].append(key)
        self._where[key] = slot

    def put_all(self, keys: Iterable[str]) -> None:
        """`put` each of `keys` in turn; a key already there, in a table the load does not grow
        (the common case: every member updated after a target), is passed over at once."""
        where = self._where
        roomy = (len(where) + 1) * 0.75 <= len(self._slots)  # (changes only with a put)
        for key in keys:
            if roomy and key in where:
                continue
            self.put(key)
            roomy = (len(where) + 1) * 0.75 <= len(self._slots)

    def remove(self, key: str) -> None:
        """Remove `key` if it is there."""
        slot = self._where.pop(key, None)
        if slot is not None:
            self._slots[slot].remove(key)

    def _rehash(self, slots: int) -> None:
        old, self._slots = self._slots, [[] for _ in range(slots)]
        for keys in old:
            for key in keys:
                slot = _slot(key, slots)
                self._slots[slot].append(key)
                self._where[key] = slot
