"""Engines that make and read reads: ingest.py (normalise, filter, dereplicate samples)
and simulate.py (a mock community with known truth)."""
