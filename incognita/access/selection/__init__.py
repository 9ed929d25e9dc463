"""Stage 4, selection: the idle check, the oracle profile and the frozen corpus."""
