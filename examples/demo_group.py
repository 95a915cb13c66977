"""A small consumer group that plans through the assignment service (remote mode).

    python -m examples.demo_group --members 3

Environment: BOOTSTRAP_SERVERS (default 127.0.0.1:9092), ASSIGNOR_URL (default
http://127.0.0.1:8000), ASSIGNOR_API_TOKEN. Creates the topic ``demo-orders`` if missing,
produces keyed records with the Java-compatible partitioner, and prints each member's
partitions whenever they change. Stop with Ctrl-C.
"""

from __future__ import annotations

import argparse
import asyncio
import os

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import TopicAlreadyExistsError

from assignor.integrations.aiokafka import KafkaPartitioner, StickyAssignor

TOPIC = "demo-orders"


async def ensure_topic(bootstrap: str, partitions: int) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(TOPIC, partitions, 1)])
    except TopicAlreadyExistsError:
        pass
    finally:
        await admin.close()


async def member(name: str, bootstrap: str, url: str, token: str | None) -> None:
    assignor = StickyAssignor(service_url=url, token=token)
    consumer = AIOKafkaConsumer(TOPIC, bootstrap_servers=bootstrap, group_id="demo-group",
                                partition_assignment_strategy=(assignor,))
    await consumer.start()
    last = None
    try:
        while True:
            await consumer.getmany(timeout_ms=1000)
            now = sorted(tp.partition for tp in consumer.assignment())
            if now != last:
                last = now
                print(f"{name}: generation {assignor.generation}, partitions {now} "
                      f"(remote plans {assignor.remote_plans}, local fallbacks {assignor.fallbacks})", flush=True)
    finally:
        await consumer.stop()


async def produce(bootstrap: str) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, partitioner=KafkaPartitioner())
    await producer.start()
    try:
        i = 0
        while True:
            await producer.send(TOPIC, b"order %d" % i, key=b"customer-%d" % (i % 100))
            i += 1
            await asyncio.sleep(0.05)
    finally:
        await producer.stop()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", type=int, default=3)
    parser.add_argument("--partitions", type=int, default=12)
    args = parser.parse_args()
    bootstrap = os.environ.get("BOOTSTRAP_SERVERS", "127.0.0.1:9092")
    url = os.environ.get("ASSIGNOR_URL", "http://127.0.0.1:8000")
    token = os.environ.get("ASSIGNOR_API_TOKEN") or None
    await ensure_topic(bootstrap, args.partitions)
    tasks = [member(f"member-{i}", bootstrap, url, token) for i in range(args.members)]
    await asyncio.gather(produce(bootstrap), *tasks)


if __name__ == "__main__":
    asyncio.run(main())
