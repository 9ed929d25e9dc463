"""Stage 7, reader: the deterministic trajectory reader and the trials table."""
