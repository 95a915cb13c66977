"""Adapters that put the core into Kafka clients (each behind its own optional extra)."""
