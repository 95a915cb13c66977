"""A consumer-group member in its own process, so a test can kill it without a goodbye.

Usage: python -m tests.aiokafka_member BOOTSTRAP GROUP TOPIC
Prints one JSON line per assignment it settles on: {"generation": G, "partitions": [...]}.
"""

import asyncio
import json
import sys

from aiokafka import AIOKafkaConsumer

from assignor.integrations.aiokafka import StickyAssignor
from tests.broker import CONSUMER_SETTINGS


async def main(bootstrap: str, group: str, topic: str) -> None:
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group,
                                partition_assignment_strategy=(StickyAssignor(),), **CONSUMER_SETTINGS)
    await consumer.start()
    last = None
    while True:
        await consumer.getmany(timeout_ms=200)
        now = (consumer._coordinator.generation, sorted(tp.partition for tp in consumer.assignment()))
        if now != last:
            last = now
            print(json.dumps({"generation": now[0], "partitions": now[1]}), flush=True)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
