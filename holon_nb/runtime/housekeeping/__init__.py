"""Housekeeping of the holon home: pruning artifacts and task logs (issue 9 item 7, D13)."""

from ._prune import PrunePolicy, PruneReport, prune_home

__all__ = ["PrunePolicy", "PruneReport", "prune_home"]
