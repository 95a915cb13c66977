"""Kafka's names of the error codes this project meets in answers
(``org.apache.kafka.common.protocol.Errors``, 4.3.1)."""

from __future__ import annotations

__all__ = ["ERRORS", "error_name"]

ERRORS = {3: "UNKNOWN_TOPIC_OR_PARTITION", 7: "REQUEST_TIMED_OUT", 14: "COORDINATOR_LOAD_IN_PROGRESS",
          15: "COORDINATOR_NOT_AVAILABLE", 16: "NOT_COORDINATOR", 24: "INVALID_GROUP_ID", 25: "UNKNOWN_MEMBER_ID",
          29: "TOPIC_AUTHORIZATION_FAILED", 30: "GROUP_AUTHORIZATION_FAILED", 31: "CLUSTER_AUTHORIZATION_FAILED",
          33: "UNSUPPORTED_SASL_MECHANISM", 34: "ILLEGAL_SASL_STATE", 35: "UNSUPPORTED_VERSION",
          42: "INVALID_REQUEST", 58: "SASL_AUTHENTICATION_FAILED", 69: "GROUP_ID_NOT_FOUND",
          81: "GROUP_MAX_SIZE_REACHED", 110: "FENCED_MEMBER_EPOCH", 111: "UNRELEASED_INSTANCE_ID",
          112: "UNSUPPORTED_ASSIGNOR", 113: "STALE_MEMBER_EPOCH", 128: "INVALID_REGULAR_EXPRESSION"}


def error_name(code: int) -> str:
    """Kafka's name of `code` (``error N`` for one not listed)."""
    return ERRORS.get(code, f"error {code}")
