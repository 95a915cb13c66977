"""Spark jobs over the assignor core (to come)."""
