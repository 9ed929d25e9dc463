"""Every file the statistics stage writes, importable without pandas or scipy, so the
workflow can declare them at parse time (a test keeps this list and run_stats in step)."""

TABLE_NAMES = (
    "success",
    "contrasts",
    "separability",
    "separability_summary",
    "interactions",
    "dispersion",
    "split_half",
    "split_half_summary",
    "composition",
    "process",
    "counts",
    "cost",
    "power",
    "audit_reads",
    "audit_approach",
    "acquisition",
    "information_channel",
    "participant_fidelity",
    "attribution",
)
OUTPUT_FILES = tuple(f"{name}.{ext}" for name in TABLE_NAMES for ext in ("csv", "md")) + ("primary.md",)
# Written only when the config has an `exploratory` block (incognita.access.stats.exploratory).
EXPLORATORY_TABLES = ("exploratory", "unbundling")
EXPLORATORY_FILES = tuple(f"{name}.{ext}" for name in EXPLORATORY_TABLES for ext in ("csv", "md"))
