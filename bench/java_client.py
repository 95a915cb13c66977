"""The Java client's own assignors timed on the benchmark's groups, in the same sitting as ours:
kafka-clients of the pinned descriptor (`jvm/pom.xml`), called as a leader calls them by our
driver (``jvm/src/AssignorCalls.java``, also what `tests/integration/test_java_assignors.py`
holds our plans to), one JVM per group, warmed up by one call, then the median of `runs` calls,
each of a fresh assignor.

An eager member sends its previous assignment in its sticky user data (as Java writes it), a
cooperative one in its subscription with its generation; racks go in as each partition's
replica racks and each member's ``client.rack``."""

from __future__ import annotations

import statistics
import subprocess
from typing import Any

from bench.java_members import driver_command

#: The JVM's heap: the Java client's recording ran with 16 GB for the million-partition groups.
HEAP = "-Xmx16g"


def driver_lines(group: Any, assignor: str) -> list[str]:
    """`group` as the driver's ``topic`` and ``member`` lines for `assignor` (the Java name)."""
    from assignor.protocol import encode_sticky_user_data

    lines = []
    for topic, count in group.topics.items():
        racks = (group.partition_racks or {}).get(topic)
        lines.append(f"topic {topic} " + (str(count) if racks is None else
                                          "/".join(",".join(r) if r else "-" for r in racks)))
    for m in group.members:
        owned = ",".join(f"{tp.topic}:{tp.partition}" for tp in m.owned) or "-"
        user_data = "-"
        if assignor == "sticky":
            owned = "-"
            if m.owned or m.generation != -1:
                user_data = encode_sticky_user_data(list(m.owned), None if m.generation == -1 else m.generation).hex()
        lines.append(f"member {m.id} {m.rack or '-'} {m.generation} {','.join(m.topics)} {owned} {user_data}"
                     + (f" {m.group_instance_id}" if m.group_instance_id else ""))
    return lines


def java_time(group: Any, assignor: str = "sticky", runs: int = 3, limit: float = 120.0) -> dict[str, Any]:
    """``{"seconds": median, "loads": "MIN-MAX"}`` of the Java client's `assignor` on `group`, or
    ``{"seconds": None}`` when one call takes longer than `limit` seconds."""
    commands = [*driver_lines(group, assignor), f"time {assignor} {runs} {int(limit * 1000)}"]
    done = subprocess.run(driver_command("AssignorCalls", HEAP),
                          input="\n".join(commands), capture_output=True, text=True, check=True,
                          timeout=limit * (runs + 1) + 120)
    answer = done.stdout.strip()
    if answer == "timeout":
        return {"seconds": None, "loads": "-"}
    millis, loads = answer.split(";")
    return {"seconds": statistics.median(float(m) for m in millis.split(",")) / 1000, "loads": loads}
