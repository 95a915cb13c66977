"""The flexible arrays the compiled reader reads in C (`assignor/wire/_compact_arrays.c`: KIP-848's
topic partitions and arrays of names) against the plain codec, its reference: ConsumerGroupDescribe
responses of random members read the same, and, cut at every offset or with any byte changed,
read the same or are refused with the same error; without its C part the reader reads the same."""

from __future__ import annotations

import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assignor.errors import ProtocolError
from assignor.model import INT32_MAX, INT32_MIN
from assignor.topic_ids import TopicId, text_of_bytes
from assignor.wire import admin, codec, compiled

DESCRIBE = admin.CONSUMER_GROUP_DESCRIBE
pytestmark = pytest.mark.skipif(compiled._in_c is None, reason="built without a C compiler")

# Names of every varint width a count or length takes here (one byte below 127, two above).
_NAMES = st.one_of(st.sampled_from(["", "t", "orders", "ünïcødé", "a" * 126, "b" * 127, "c" * 300]),
                   st.text(max_size=20))
_ENTRIES = st.lists(st.tuples(st.binary(min_size=16, max_size=16), _NAMES,
                              st.lists(st.integers(INT32_MIN, INT32_MAX), max_size=130)), max_size=5)


def _response(members: list[tuple[list[str], list[tuple[bytes, str, list[int]]], list[tuple[bytes, str, list[int]]]]]
              ) -> bytes:
    def assignment(entries: list[tuple[bytes, str, list[int]]]) -> tuple[object, ...]:
        return ([(text_of_bytes(raw), name, partitions) for raw, name, partitions in entries],)
    return codec.encode(DESCRIBE.response, {"throttle_time_ms": 0, "groups": [
        (0, None, "g", "Stable", 3, 3, "uniform", [
            (f"m{i}", None, None, 3, "client", "/127.0.0.1", names, None, assignment(owned), assignment(target), 1)
            for i, (names, owned, target) in enumerate(members)], 0)]}, DESCRIBE.version)


def _read(read, data: bytes) -> object:
    try:
        return read(DESCRIBE.response, data, DESCRIBE.version)
    except ProtocolError as error:
        return str(error)


def _plain(message, data, version):
    return codec.decode(message, data, version)[1]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.lists(_NAMES, max_size=5), _ENTRIES, _ENTRIES), min_size=1, max_size=3))
def test_random_members_read_as_the_plain_codec_reads_them(members):
    data = _response(members)
    got = compiled.decode(DESCRIBE.response, data, DESCRIBE.version)
    assert got == _plain(DESCRIBE.response, data, DESCRIBE.version)
    (group,) = got["groups"]
    for member, (names, owned, target) in zip(group[7], members, strict=True):
        assert member[6] == names
        assert member[8] == ([(str(TopicId.of_bytes(raw)), name, ps) for raw, name, ps in owned],)
        assert member[9] == ([(str(TopicId.of_bytes(raw)), name, ps) for raw, name, ps in target],)


_SAMPLE = _response([(["orders", "b" * 127], [(bytes(range(16)), "orders", [0, 2, -1]), (b"\xff" * 16, "ü", [])],
                      [(bytes(16), "b" * 127, list(range(130)))])])


@pytest.mark.parametrize("change", [None, 0x00, 0x01, 0x7F, 0x80, 0xFF])
def test_every_cut_or_changed_byte_reads_or_fails_as_the_plain_codec_does(change):
    """A byte changed anywhere (a count, a length, a varint's continuation, a tagged field's
    count, a name's UTF-8), or the bytes cut there: the same values, or the same error."""
    for at in range(len(_SAMPLE)):
        data = _SAMPLE[:at] if change is None else _SAMPLE[:at] + bytes([change]) + _SAMPLE[at + 1:]
        assert _read(compiled.decode, data) == _read(_plain, data), at


def test_without_its_c_part_the_reader_reads_the_same(monkeypatch):
    data = _SAMPLE
    expected = compiled.decode(DESCRIBE.response, data, DESCRIBE.version)
    compiled._reader.cache_clear()
    monkeypatch.setattr(compiled, "_in_c", None)
    try:
        assert compiled.decode(DESCRIBE.response, data, DESCRIBE.version) == expected
    finally:
        compiled._reader.cache_clear()  # (readers built without C are not kept)


def test_the_texts_kept_by_their_bytes_stay_bounded(monkeypatch):
    monkeypatch.setattr(compiled, "_KEPT", 2)
    for k in range(3):  # responses of names not seen before
        compiled.decode(DESCRIBE.response, _response([([f"n{k}-{i}" for i in range(5)], [], [])]), DESCRIBE.version)
        # cleared before each response once over the bound: at most the bound and one response's names
        assert len(compiled._names) <= 2 + 5


def test_what_the_c_part_reads_gives_back_every_reference_it_took():
    """Read, then dropped: the kept texts and the bytes are referenced as before, on a full read
    and on one given up midway (a name that is not UTF-8 after good entries)."""
    from assignor.wire import _compact_arrays

    good = _response([(["orders"], [(bytes(16), "orders", [1, 2])] * 3, [])])
    bad = good.replace(b"orders", b"order\xff")
    last_bad = good[: good.rindex(b"orders")] + b"order\xff" + good[good.rindex(b"orders") + 6 :]
    ids: dict[bytes, str] = {}
    names: dict[bytes, str] = {}
    at = good.index(b"orders") - 1  # the subscribed names' array starts at its count, just before
    assert _compact_arrays.strings(good, at - 1, names) == (["orders"], at + 7)
    (text,) = names.values()
    before = sys.getrefcount(text), sys.getrefcount(good), sys.getrefcount(last_bad)
    for _ in range(100):
        assert _compact_arrays.strings(good, at - 1, names) is not None
        assert _compact_arrays.strings(bad, at - 1, names) is None
        start = good.index(bytes(16)) - 1
        read = _compact_arrays.read(good, start, ids, names, text_of_bytes)
        assert read is not None and read[0] == [(str(TopicId.of_bytes(bytes(16))), "orders", [1, 2])] * 3
        assert _compact_arrays.read(last_bad, start, ids, names, text_of_bytes) is None  # (two entries read)
        del read
    assert (sys.getrefcount(text), sys.getrefcount(good), sys.getrefcount(last_bad)) == before


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=120), st.integers(-3, 125))
def test_any_bytes_at_any_offset_read_or_are_left_to_the_closures(data, at):
    """Bytes of no message at all, from any offset (before the start, past the end): a value of
    the array's shape, or None; never a crash or an error of the C part's own."""
    from assignor.wire import _compact_arrays

    for read in (_compact_arrays.read(data, at, {}, {}, text_of_bytes), _compact_arrays.strings(data, at, {})):
        assert read is None or (isinstance(read[0], list) and 0 <= at < read[1] <= len(data))


def _varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    return bytes([*out, value])


@settings(max_examples=200, deadline=None)
@given(_ENTRIES, st.lists(_NAMES, max_size=5), st.binary(max_size=3))
def test_the_c_part_reads_every_plainly_written_array_itself(entries, names, before):
    """Arrays written here by hand (the compact count, each entry's id, name, partitions and an
    empty tagged-fields byte), after any bytes: read by the C part itself, not left to the
    closures, to the end of the array."""
    from assignor.wire import _compact_arrays

    written = _varint(len(entries) + 1) + b"".join(
        raw + _varint(len(name.encode()) + 1) + name.encode() + _varint(len(ps) + 1)
        + b"".join(p.to_bytes(4, "big", signed=True) for p in ps) + b"\0" for raw, name, ps in entries)
    assert _compact_arrays.read(before + written + b"?", len(before), {}, {}, text_of_bytes) == (
        [(str(TopicId.of_bytes(raw)), name, ps) for raw, name, ps in entries], len(before) + len(written))
    written = _varint(len(names) + 1) + b"".join(_varint(len(n.encode()) + 1) + n.encode() for n in names)
    assert _compact_arrays.strings(before + written, len(before), {}) == (names, len(before) + len(written))


def _names_array(names: list[str]) -> bytes:
    return _varint(len(names) + 1) + b"".join(_varint(len(n.encode()) + 1) + n.encode() for n in names)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(_NAMES, max_size=4), min_size=1, max_size=6),
       st.lists(st.tuples(st.integers(0, 5), st.binary(max_size=2)), max_size=20))
def test_names_read_again_from_the_same_bytes_are_the_names_read_first(pool, reads):
    """The C part keeps the last few arrays of names it read whole (members subscribe alike):
    an array met again, anywhere in any buffer, reads as it did, into a list of its own (a
    caller changing one changes no other read); more arrays than it keeps, in turn, read alike."""
    from assignor.wire import _compact_arrays

    for which, before in reads:
        names = pool[which % len(pool)]
        written = _names_array(names)
        read = _compact_arrays.strings(before + written + b"?", len(before), {})
        assert read == (names, len(before) + len(written))
        read[0].append("changed")  # (the next read of these bytes is not this list)
        again = _compact_arrays.strings(written, 0, {})
        assert again == (names, len(written))


def test_an_array_like_one_kept_but_not_utf8_is_still_left_to_the_closures():
    from assignor.wire import _compact_arrays

    good = _names_array(["orders", "payments"])
    assert _compact_arrays.strings(good, 0, {}) == (["orders", "payments"], len(good))
    bad = good.replace(b"orders", b"order\xff")
    assert _compact_arrays.strings(bad, 0, {}) is None
    assert _compact_arrays.strings(good[:-1], 0, {}) is None  # (cut: its last name passes the end)
