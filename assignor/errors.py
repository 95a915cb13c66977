"""Exceptions raised by the assignor core.

Exception tree::

    ValueError
    └── AssignorError                 base class of every error the core raises on purpose
        ├── InvalidGroupError         a Group that cannot describe a real consumer group
        ├── UnknownStrategyError      `assign` was asked for a strategy it does not know
        ├── ProtocolError             bytes that are not the expected consumer-protocol message,
        │                             or a value that does not fit its wire field
        └── JavaAssignorFailure       a Java-faithful strategy met a group on which Java's own
                                      assignor throws or returns a broken plan (it says which)

Hostile *claims* (owned partitions that do not exist, duplicates, stale generations) are not
errors: a real group leader receives them from the wire and must still produce a plan, so the
strategies drop them. Errors are for inputs that no broker could have produced, such as a
negative partition count or two members with the same id.
"""

__all__ = ["AssignorError", "InvalidGroupError", "JavaAssignorFailure", "ProtocolError", "UnknownStrategyError"]


class AssignorError(ValueError):
    """Base class of the errors raised by the assignor core."""


class InvalidGroupError(AssignorError):
    """The group description is malformed (bad counts, duplicate member ids, wrong types)."""


class UnknownStrategyError(AssignorError):
    """The requested strategy name is not registered."""


class ProtocolError(AssignorError):
    """Bytes that are not a valid encoding of the expected message (field and offset named)."""


class JavaAssignorFailure(AssignorError):
    """Java's assignor fails on this group (an exception, or a plan with a partition twice or a
    partition that does not exist); the message says what Java would do. The Java-faithful
    strategies raise it instead of returning a plan no Java leader would send."""
