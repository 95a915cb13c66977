"""The ownership timeline of a rebalance run: `bench.ownership`."""

from bench.ownership import Timeline

__all__ = ["Timeline"]
