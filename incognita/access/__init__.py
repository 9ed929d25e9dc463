"""The access family: tau-bench retail tasks under matched access conditions (direct, indirect, social, native)."""
