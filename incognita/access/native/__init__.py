"""Stage 6, native: the unmodified upstream harness as the external anchor."""
