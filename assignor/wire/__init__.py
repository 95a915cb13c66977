"""Kafka's consumer protocol on the wire, in layers that import downward:

- `schema`: the message layouts as data (Subscription v0-v3, Assignment, sticky user data
  V0/V1, cooperative-sticky user data), readable beside Kafka's message specs;
- `codec`: the plain reference reader and writer, which walks those tables;
- `messages`: the object API, one message at a time, over the codec;
- `buffers`, `arrays`, `cache`, `columnar`: the columnar API, a whole group's messages at
  once with numpy, held equal to the codec by property tests.

`assignor.protocol` re-exports the public names of both APIs.
"""
