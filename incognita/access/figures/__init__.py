"""Stage 9, figures: the paper's figures and tables from the statistics CSVs."""
