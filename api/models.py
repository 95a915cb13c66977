"""Request bodies of the HTTP API (pydantic), with the examples shown in the OpenAPI docs."""

from __future__ import annotations

from collections.abc import Mapping, Sized
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictBool, WithJsonSchema, model_validator

from api.protocol_io import HIGHEST_VERSION
from assignor.model import INSTANCE_ID_PATTERN, INT32_MAX, INT32_MIN, member_identity_problem
from assignor.protocols import PROTOCOLS, protocol_named
from assignor.strategies import DEFAULT_STRATEGY, REGISTRY, strategy_named
from assignor.topic_ids import topic_ids_of
from assignor.whatif.refusals import MAX_SIZE_BOUNDS
from assignor.whatif.refusals import SETTINGS as CONVERSION
from assignor.whatif.timing import BOUNDS
from assignor.whatif.timing import SETTINGS as TIMING

#: Simulation seeds: any 64-bit integer (the answer repeats the seed, and JSON integers past 64
#: bits are not written).
SEED_MIN, SEED_MAX = -(2**63), 2**63 - 1
#: A topic id as Kafka prints a ``Uuid``: what `assignor.topic_ids.parse_topic_id` accepts.
TOPIC_ID_PATTERN = r"^[A-Za-z0-9_-]{22}$"

# Every list and map has a maximum length, and validation stops at its first bad item
# (`fail_fast`): pydantic otherwise records one error per bad item, and a 1 MiB body of
# `[{}, {}, ...]` cost a worker 800 MB of errors to answer a 422. The maxima are what any
# setting of the limits could use (`assignor.limits`, checked after validation with the
# service's own values, answers 413); the body limit caps the rest.
_MEMBERS = 1_000_000
_TOPICS = 1_000_000
_PARTITIONS = 100_000_000
_REPLICAS = 1_000


def _many(maximum: int, **more: Any) -> Any:
    return Field(max_length=maximum, fail_fast=True, **more)


def _absent(**more: Any) -> Any:
    """A field that may be left out but, given, is never null (the group JSON's snapshot fields,
    as the worker reads them): its default is not validated, a null sent is."""
    return Field(None, **more)


EXAMPLE_GROUP: dict[str, Any] = {
    "topics": {"orders": 6, "payments": 3},
    "members": [
        {"id": "c1", "topics": ["orders", "payments"], "owned": [["orders", 0], ["orders", 1], ["payments", 0]],
         "generation": 4},
        {"id": "c2", "topics": ["orders", "payments"], "owned": [["orders", 2], ["orders", 3]], "generation": 4},
        {"id": "c3", "topics": ["orders"]},
    ],
}



def _strategy(name: str) -> str:
    return strategy_named(name).name  # UnknownStrategyError (a ValueError) lists the known names


def _protocol(name: str) -> str:
    return protocol_named(name).name  # UnknownProtocolError (a ValueError) lists the known names


#: A strategy name the core knows (`assignor.strategies.REGISTRY`), listed in OpenAPI.
StrategyName = Annotated[str, AfterValidator(_strategy), WithJsonSchema({"type": "string", "enum": list(REGISTRY)})]
#: A consumer protocol the core plans for (`assignor.protocols.PROTOCOLS`), listed in OpenAPI.
ProtocolName = Annotated[str, AfterValidator(_protocol), WithJsonSchema({"type": "string", "enum": list(PROTOCOLS)})]


def next_generation_problem(generations: list[int]) -> str | None:
    """Why a plan without a ``generation`` has none to stamp, or None: it is the members' highest
    plus one, an INT32 on the wire (SyncGroup's user data), which a member at 2**31 - 1 leaves no
    room for. The worker (`api.handlers.plans`) and `PlanRequest` ask it."""
    if generations and max(generations) == INT32_MAX:
        return (f"generation: the members' highest generation is {INT32_MAX} and the next does not fit an INT32: "
                "give generation")
    return None


def partition_racks_problem(topics: Mapping[str, int], partition_racks: Mapping[str, Sized]) -> str | None:
    """What is wrong with a group's ``partition_racks`` (KIP-881), if anything: a topic the group
    does not have, or not one rack list per partition. (The library reads fewer lists as "no
    racks known" for the rest; a caller of the service who sends fewer has most likely made a
    mistake.) `PlanRequest` documents the rule and ``/v1/plans``'s worker applies it."""
    for topic, racks in partition_racks.items():
        if topic not in topics:
            return f"partition_racks.{topic}: no such topic in topics"
        problem = _rack_lists_problem(f"partition_racks.{topic}", len(racks), topics[topic])
        if problem:
            return problem
    return None


def _rack_lists_problem(where: str, lists: int, partitions: int) -> str | None:
    if lists != partitions:
        return f"{where}: {lists} lists for {partitions} partitions (one per partition)"
    return None


class _Strict(BaseModel):
    # Strict: `false` is not 0 and `0` is not false; what the schema says is what is accepted.
    model_config = ConfigDict(extra="forbid", strict=True)


class Problem(BaseModel):
    """Every 4xx/5xx answer: a reason that names the field, member or limit."""

    detail: str


class PlanMember(_Strict):
    id: str
    topics: list[str] = _many(_TOPICS, default=[])
    owned: list[tuple[str, Annotated[int, Field(ge=0, le=INT32_MAX)]]] = _many(_PARTITIONS, default=[])
    # Any INT32, as on the wire: a negative generation means "unknown" (KIP-341).
    generation: int = Field(-1, ge=INT32_MIN, le=INT32_MAX)
    rack: str | None = None
    group_instance_id: str | None = Field(None, pattern=f"^{INSTANCE_ID_PATTERN}$",
                                          description="a static member's group.instance.id (KIP-345)")
    # A snapshot's member (`assignor snapshot`, GET /v1/clusters/{alias}/groups/{id}), read as it is
    # written. A field left out is not there; null is not the field (the worker's rule).
    target: list[tuple[str, Annotated[int, Field(ge=0, le=INT32_MAX)]]] = _many(_PARTITIONS, default=None, description=(
        "consumer protocol: the member's current target, planned from in place of owned"))
    member_epoch: int = _absent(ge=INT32_MIN, le=INT32_MAX, description="consumer protocol: the member's epoch")
    member_type: Literal["classic", "consumer"] = _absent(description=(
        "consumer protocol: how the member joined, classic for a member of a group mid-upgrade that still joins by "
        "JoinGroup (describes, plans nothing)"))
    client_id: str = _absent(description="the member's client.id (describes, plans nothing)")
    topic_regex: str | None = Field(None, description=(
        "consumer protocol: the member's regex subscription (RE2/J syntax); topics hold what it took, and a "
        "what-if's new topic joins them where it takes it"))


class PlanRequest(_Strict):
    """A group in the JSON group form, plus the strategy and optionally the generation to
    stamp into sticky/cooperative user data (default: the highest member generation + 1)."""

    model_config = ConfigDict(extra="forbid", strict=True,
                              json_schema_extra={"examples": [{"strategy": DEFAULT_STRATEGY.name, **EXAMPLE_GROUP}]})
    strategy: StrategyName = DEFAULT_STRATEGY.name
    generation: int | None = Field(None, ge=0, le=INT32_MAX)
    topics: dict[str, Annotated[int, Field(ge=0, le=INT32_MAX)]] = _many(_TOPICS)
    members: list[PlanMember] = _many(_MEMBERS)
    partition_racks: dict[str, Annotated[list[Annotated[list[str], _many(_REPLICAS)]], _many(_PARTITIONS)]] | None = \
        _many(_TOPICS, default=None, description="replica racks of each partition of a topic (KIP-881), one "
                                                 "list per partition")
    topic_ids: dict[str, Annotated[str, Field(pattern=TOPIC_ID_PATTERN)]] | None = _many(
        _TOPICS, default=None, description="topic ids (Kafka's Uuid, 22 base64url characters) by topic name; the "
                                           "broker's assignors (kip848-*) break ties by them, and a topic without "
                                           "one gets an id derived from its name")
    # A snapshot's group fields (they describe, and plan nothing); as `PlanMember`'s, null is not the field.
    group_id: str = _absent(description="a snapshot's group id")
    protocol: Literal["classic", "consumer"] = _absent(description="a snapshot's group protocol")
    assignor: str | None = Field(None, description="a snapshot's assignor in use (classic: the protocol chosen)")
    group_epoch: int = _absent(ge=INT32_MIN, le=INT32_MAX, description="a snapshot's group epoch (consumer)")
    assignment_epoch: int = _absent(ge=INT32_MIN, le=INT32_MAX, description="a snapshot's assignment epoch (consumer)")
    assignment_user_data: StrictBool = _absent(description=(
        "a snapshot's classic group: some member's assignment carries user data, so Kafka will not convert it "
        "online (KAFKA-18134)"))

    @model_validator(mode="after")
    def _as_the_worker_checks(self) -> PlanRequest:
        # What the JSON schema cannot say and the worker (`json_format.group_from_json`, the
        # `Group` it builds) refuses; tests/api/test_api_schema.py holds the two to one verdict.
        problem = partition_racks_problem(self.topics, self.partition_racks or {})
        if problem:
            raise ValueError(problem)
        problem = member_identity_problem(self.members)
        if problem:
            raise ValueError(f"members: {problem}")
        problem = None if self.generation is not None else next_generation_problem([m.generation for m in self.members])
        if problem:
            raise ValueError(problem)
        if self.topic_ids:
            topic_ids_of([*self.topics, *(t for t in self.topic_ids if t not in self.topics)], self.topic_ids)
        return self


class TopicSpec(_Strict):
    partitions: int = Field(ge=0, le=INT32_MAX)
    racks: list[Annotated[list[str], _many(_REPLICAS)]] | None = _many(
        _PARTITIONS, default=None, description="replica racks of each partition (KIP-881), one list per partition")

    @model_validator(mode="after")
    def _a_rack_list_per_partition(self) -> TopicSpec:
        problem = None if self.racks is None else _rack_lists_problem("racks", len(self.racks), self.partitions)
        if problem:
            raise ValueError(problem)
        return self


class SyncMember(_Strict):
    member_id: str
    metadata_b64: str = Field(description="the member's JoinGroup metadata (ConsumerProtocolSubscription), base64")
    group_instance_id: str | None = Field(None, pattern=f"^{INSTANCE_ID_PATTERN}$", description=(
        "a static member's group.instance.id, as the JoinGroup response (v5+) lists it (KIP-345): range and "
        "roundrobin deal to static members first"))


class SyncRequest(_Strict):
    """What a group leader knows after JoinGroup: the protocol chosen, the generation, the
    topics' partition counts and every member's raw metadata."""

    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra={"examples": [{
        "protocol": DEFAULT_STRATEGY.protocol.name, "generation": 7, "topics": {"orders": {"partitions": 6}},
        "members": [{"member_id": "c1", "metadata_b64": "AAMAAAABAAZvcmRlcnP/////AAAAAAAAAAT//w=="}],
    }]})
    protocol: ProtocolName
    #: The strategy that plans, by default ours of the protocol; Java's strategies plan their
    #: protocols as a Java leader would.
    strategy: StrategyName | None = None
    generation: int = Field(ge=-1, le=INT32_MAX)
    topics: dict[str, TopicSpec] = _many(_TOPICS)
    members: list[SyncMember] = _many(_MEMBERS)


class WhatIfRequest(_Strict):
    """A group (inline, or the latest state of a registered group) and events to replay."""

    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra={"examples": [{
        "group": EXAMPLE_GROUP, "events": ["member_leave:c1", "partitions_added:orders:12"],
    }]})
    group: dict[str, Any] | None = None
    group_id: str | None = None
    cluster: str | None = Field(None, pattern=r"^[A-Za-z0-9._-]{1,64}$", description=(
        "a cluster named in the service's settings (GET /v1/clusters): group_id is then a live group of it, "
        "read by a snapshot, instead of a registered one"))
    events: list[str] = _many(_MEMBERS, default=[], description="what-if events, such as member_leave:c1 or "
                              "partitions_added:orders:12 (the new total); see assignor.whatif")
    strategies: list[StrategyName] | None = _many(len(REGISTRY), default=None)
    include_plans: bool = False
    migrate: StrategyName | None = Field(default=None, description=(
        "rehearse converting the group to KIP-848's consumer protocol with this broker assignor "
        "(kip848-uniform or kip848-range); the first of `strategies` is the classic one it runs today (default: "
        "a live group's, or a snapshot's, as Kafka's clients run its assignor; else cooperative-sticky)"))
    # Time as the coordinator keeps it (`assignor.whatif.timing`; a test holds these to its SETTINGS).
    restart_seconds: float | None = Field(None, ge=BOUNDS["restart_seconds"][0], le=BOUNDS["restart_seconds"][1],
                                          allow_inf_nan=False, description=TIMING["restart_seconds"])
    consumer_heartbeat_ms: int | None = Field(None, ge=BOUNDS["consumer_heartbeat_ms"][0],
                                              le=BOUNDS["consumer_heartbeat_ms"][1],
                                              description=TIMING["consumer_heartbeat_ms"])
    classic_heartbeat_ms: int | None = Field(None, ge=BOUNDS["classic_heartbeat_ms"][0],
                                             le=BOUNDS["classic_heartbeat_ms"][1],
                                             description=TIMING["classic_heartbeat_ms"])
    assignment_interval_ms: int | None = Field(None, ge=BOUNDS["assignment_interval_ms"][0],
                                               le=BOUNDS["assignment_interval_ms"][1],
                                               description=TIMING["assignment_interval_ms"])
    session_timeout_ms: int | None = Field(None, ge=BOUNDS["session_timeout_ms"][0],
                                           le=BOUNDS["session_timeout_ms"][1], description=TIMING["session_timeout_ms"])
    # What decides whether Kafka converts the group (`assignor.whatif.refusals`; with `migrate` only).
    migration_policy: Literal["bidirectional", "upgrade", "downgrade", "disabled"] | None = Field(
        None, description=CONVERSION["migration_policy"])
    consumer_max_size: int | None = Field(None, ge=MAX_SIZE_BOUNDS[0], le=MAX_SIZE_BOUNDS[1],
                                          description=CONVERSION["consumer_max_size"])
    assignment_user_data: bool | None = Field(None, description=CONVERSION["assignment_user_data"])

MessageType = Literal["subscription", "assignment", "sticky_user_data", "cooperative_user_data"]


class DecodeRequest(_Strict):
    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra={"examples": [
        {"type": "subscription", "data_b64": "AAMAAAABAAZvcmRlcnP/////AAAAAAAAAAT//w=="}]})
    type: MessageType
    data_b64: str


class EncodeRequest(_Strict):
    """`value` has the fields `decode` returns for the same type. `version` applies to a
    subscription (0-3; a field newer than the version asked for is a 422, not dropped) and an
    assignment (0-3); sticky user data is V1 with a `generation`, else V0; cooperative user data
    has no version. The answer says the version written."""

    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra={"examples": [
        {"type": "subscription", "version": 3, "value": {"topics": ["orders"], "generation_id": 4}}]})
    type: MessageType
    version: int = Field(HIGHEST_VERSION, ge=0, le=HIGHEST_VERSION)
    value: dict[str, Any]


class PartitionsRequest(_Strict):
    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra={"examples": [
        {"keys": ["user-1", "user-2"], "partitions": 12, "partitioner": "murmur2"}]})
    keys: list[str] = _many(_PARTITIONS)
    encoding: Literal["utf-8", "base64"] = "utf-8"
    partitions: int = Field(ge=1, le=INT32_MAX)
    partitioner: Literal["murmur2", "consistent", "fnv1a"] = Field(
        "murmur2", description="murmur2: Java's producer (and librdkafka's murmur2); consistent (CRC32) and "
                               "fnv1a: librdkafka's hash partitioners")


class SimulationConfig(_Strict):
    """One run; fields as `assignor.partitioners.simulate.Config` (defaults: the KIP-794 setup)."""

    label: str = "run"
    records: int = Field(122_880, ge=1, le=500_000)
    record_size: int = Field(512, ge=1, le=1_048_576)
    rate: float = Field(2048.0, gt=0, le=1_000_000)
    partitions: int = Field(3, ge=1, le=10_000)
    brokers: list[float] = _many(100, default=[20.0, 0.0, 0.0], min_length=1)
    partitioner: Literal["builtin", "default", "roundrobin"] = "builtin"
    adaptive: bool = True
    availability_timeout_ms: float = Field(0.0, ge=0)
    switch_rule: Literal["kip", "deferred"] = "kip"
    batch_size: int = Field(16384, ge=1, le=16 * 1024 * 1024)
    linger_ms: float = Field(0.0, ge=0, le=60_000)
    max_in_flight: int = Field(5, ge=1, le=100)
    seed: int = Field(1, ge=SEED_MIN, le=SEED_MAX)


class SimulationRequest(_Strict):
    """A preset (optionally shortened) or your own runs."""

    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra={"examples": [
        {"preset": "kip794-series1", "records": 20000}]})
    preset: Literal["kip794-series1", "kip794-series2", "kip480"] | None = None
    records: int | None = Field(None, ge=1, le=500_000)
    seed: int | None = Field(None, ge=SEED_MIN, le=SEED_MAX)
    runs: list[SimulationConfig] | None = _many(8, default=None, min_length=1)
