"""Incognita: matched access conditions for tau-bench retail tasks."""

__version__ = "0.1.0"
