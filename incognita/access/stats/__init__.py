"""Stage 8, statistics of the paper (Sections 5-6, Appendix B) over the trials table.

Modules: `estimator` (task-level means, paired t intervals, the trials table's columns),
`signflip` (exact task-blocked sign-flip test, Holm), `power` (corpus-size extrapolation),
`splithalf` (split-half concordance), `interpretation` (the frozen interpretation table),
`paper_tables` (every output table), `report` (the pre-specified analysis in words), `outputs`
(the file names, importable without pandas), `synthetic` (a contract-shaped synthetic trials
table for tests and benchmarks), `stats_stage` (`run_stats`, which writes everything) and
`commands` (`incognita stats`, `incognita power`). Planning a design before it runs (`incognita
plan`) is incognita.access.planning.
"""
