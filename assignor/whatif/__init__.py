"""Rebalance what-if: replay events on a group under each strategy, side by side.

"What will move, and how long will consumers pause?" For each strategy the engine keeps the
group's state (each member's partitions and generation) and, per event, runs the rebalance the
way a live group does: every member's JoinGroup metadata is encoded as its client would send it
for that protocol and decoded by the leader (`assignor.protocol`), the plan's SyncGroup bytes
are decoded back into what each member now owns. Eager protocols revoke everything each
rebalance; cooperative-sticky runs rounds until nothing is withheld (KIP-429).

The Java-faithful strategies (``java-sticky``, ``java-cooperative-sticky``) run on the wire as
their protocols do, with one Java leader per run whose memory (its highest generation seen)
carries over; a step on which Java's assignor fails is reported with the reason (``failed``)
and leaves the group as it was. When a Java strategy runs beside ours, ``comparisons`` says
what switching to ours would change (see `compare`).

Events: `assignor.events` (each kind once: its text, its change to the group and to the sizes
the limits count); `parse_event` reads the ``kind:arg:arg`` form used by the CLI. What a run would
build is checked against its `assignor.limits.Limits` before the first rebalance.
"""

from __future__ import annotations

from assignor.errors import WhatIfError
from assignor.events import Event, apply_event, parse_event
from assignor.whatif.figures import Figures, Step, Summary
from assignor.whatif.migration import (
    MIGRATE_FROM,
    Migration,
    check_migration,
    compared_for,
    migrate,
    rehearsed_from,
    strategy_today,
)
from assignor.whatif.refusals import DEFAULT_CONVERSION, Conversion, Refusal, conversion_of
from assignor.whatif.refusals import SETTINGS as CONVERSION_SETTINGS
from assignor.whatif.replay import ALL_STRATEGIES, Comparison, Progress, Result, StrategyRun, compare, run
from assignor.whatif.steps import consumer_member_id
from assignor.whatif.timing import DEFAULT_TIMING, Timing, timing_of
from assignor.whatif.timing import SETTINGS as TIMING_SETTINGS

__all__ = ["ALL_STRATEGIES", "CONVERSION_SETTINGS", "DEFAULT_CONVERSION", "DEFAULT_TIMING", "MIGRATE_FROM",
           "TIMING_SETTINGS", "Comparison", "Conversion", "Event", "Figures", "Migration", "Progress", "Refusal",
           "Result", "Step", "StrategyRun", "Summary", "Timing", "WhatIfError", "apply_event", "check_migration",
           "compare", "compared_for", "consumer_member_id", "conversion_of", "migrate", "parse_event", "rehearsed_from",
           "run", "strategy_today", "timing_of"]
