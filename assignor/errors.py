"""Exceptions raised by the assignor core, its producer side and its adapters.

Exception tree::

    ValueError
    └── AssignorError                 base class of every error raised on purpose
        ├── InvalidGroupError         a Group that cannot describe a real consumer group
        ├── UnknownStrategyError      `assign` was asked for a strategy it does not know
        ├── UnknownProtocolError      a consumer protocol name that is not registered
        ├── ProtocolError             bytes that are not the expected consumer-protocol message,
        │                             or a value that does not fit its wire field
        ├── JavaAssignorFailure       a Java-faithful strategy met a group on which Java's own
        │                             assignor throws or returns a broken plan (it says which)
        ├── LibrdkafkaAssignorFailure a librdkafka-faithful strategy met a group on which
        │                             librdkafka's leader would stop (it says where)
        ├── WhatIfError               a what-if event that cannot apply to its group
        ├── LimitExceededError        an input past one of the documented limits (`assignor.limits`)
        ├── PartitionerError          a producer partitioner cannot choose (no partitions, bad key)
        ├── SimulationError           a producer simulation the simulator cannot run
        ├── ExecutorEnvironmentError  Spark executors whose Python cannot run the fleet jobs
        └── ClusterError              a cluster the snapshot cannot read: unreachable, a
                                      refusal (authorization, unknown group), a timeout, bad
                                      connection settings (`assignor.cluster`)

Hostile *claims* (owned partitions that do not exist, duplicates, stale generations) are not
errors: a real group leader receives them from the wire and must still produce a plan, so the
strategies drop them. Errors are for inputs that no broker could have produced, such as a
negative partition count or two members with the same id.
"""

__all__ = ["AssignorError", "ClusterError", "ExecutorEnvironmentError", "InvalidGroupError", "JavaAssignorFailure",
           "LibrdkafkaAssignorFailure", "LimitExceededError", "PartitionerError", "ProtocolError", "SimulationError",
           "UnknownProtocolError", "UnknownStrategyError", "WhatIfError"]


class AssignorError(ValueError):
    """Base class of the errors raised by the assignor core."""


class InvalidGroupError(AssignorError):
    """The group description is malformed (bad counts, duplicate member ids, wrong types)."""


class UnknownStrategyError(AssignorError):
    """The requested strategy name is not registered."""


class UnknownProtocolError(AssignorError):
    """The requested consumer protocol name is not registered (`assignor.protocols`)."""


class ProtocolError(AssignorError):
    """Bytes that are not a valid encoding of the expected message (field and offset named)."""


class JavaAssignorFailure(AssignorError):
    """Java's assignor fails on this group (an exception, or a plan with a partition twice or a
    partition that does not exist); the message says what Java would do. The Java-faithful
    strategies raise it instead of returning a plan no Java leader would send."""


class LibrdkafkaAssignorFailure(AssignorError):
    """librdkafka's leader would stop on this group (an assertion, or a member it looks up and
    does not find); the message says where. The librdkafka-faithful strategy raises it instead of
    guessing a plan no librdkafka leader would send."""


class WhatIfError(AssignorError):
    """An event that cannot apply to the group (unknown member, malformed arguments)."""


class LimitExceededError(AssignorError):
    """An input larger than a documented limit; the message names the limit and the value."""

    def __init__(self, limit: str, value: int | float, maximum: int | float, what: str) -> None:
        super().__init__(f"{limit}: {what} {value}, the limit is {maximum}")
        self.limit, self.value, self.maximum = limit, value, maximum


class PartitionerError(AssignorError):
    """A partitioner cannot choose: no partitions, a null key where one is needed, bad input."""


class SimulationError(AssignorError):
    """A configuration the simulator cannot run (named field and reason)."""


class ExecutorEnvironmentError(AssignorError):
    """The executors' Python cannot run the job (a library missing, another Python version)."""


class ClusterError(AssignorError):
    """A cluster that cannot be read: the message names the cluster (its bootstrap servers or
    alias), the group or broker where it applies, and what Kafka answered."""
