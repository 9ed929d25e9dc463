"""Stage 2, golden: reference trajectories with the provenance of every argument, and their replay."""
