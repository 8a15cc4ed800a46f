"""The history page of ``pglab serve``: the report's (``report.history``)."""

from pglab.report.history import page

__all__ = ["page"]
