"""Benchmarks: `python -m bench` (or `make bench`). See bench/__main__.py."""
