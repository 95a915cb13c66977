"""HTTP service over the assignor core (FastAPI)."""
