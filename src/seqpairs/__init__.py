"""seqpairs: all-pairs alignment distances, identity filtering, significance and clustering."""

__version__ = "0.1.0"
