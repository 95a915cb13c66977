"""Kafka consumer-group partition assignment: sticky (KIP-54, KIP-341), cooperative-sticky
(KIP-429), range and roundrobin, rack-aware (KIP-881), and KIP-54 exactly as the Java client
runs it (java-sticky, java-cooperative-sticky), and librdkafka's (librdkafka-cooperative-sticky);
the consumer protocol on the wire
(`assignor.protocol`) and the producer's partitioners (`assignor.partitioners`).

Examples
--------
>>> from assignor import Group, Member, assign
>>> plan = assign("sticky", Group(topics={"t0": 2, "t1": 2},
...                               members=[Member("c0", ["t0", "t1"]), Member("c1", ["t0", "t1"])]))
>>> {m: [tuple(tp) for tp in tps] for m, tps in plan.assignment.items()}
{'c0': [('t0', 0), ('t1', 0)], 'c1': [('t0', 1), ('t1', 1)]}
"""

from assignor.errors import (
    AssignorError,
    InvalidGroupError,
    JavaAssignorFailure,
    LibrdkafkaAssignorFailure,
    UnknownStrategyError,
)
from assignor.model import Claims, Group, Member, Plan, TopicPartition
from assignor.strategies import STRATEGIES, assign, assign_columns

__all__ = [
    "AssignorError",
    "Claims",
    "Group",
    "InvalidGroupError",
    "JavaAssignorFailure",
    "LibrdkafkaAssignorFailure",
    "Member",
    "Plan",
    "STRATEGIES",
    "TopicPartition",
    "UnknownStrategyError",
    "assign",
    "assign_columns",
]
