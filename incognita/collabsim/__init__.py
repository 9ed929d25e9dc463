"""CollabSim: four CSCW collaboration paradigms run under controlled conditions.

The second environment family of this pipeline (the CollabSim paper, `docs/collabsim.md`).
It shares model backends, the response cache, prices, atomic I/O, intervals, tables and
figure output with Incognita through `incognita.common`, and imports nothing else of it.

Layout, in the order its rooms build on each other (a room imports only rooms before it;
tests/test_import_graph.py, COLLABSIM_ORDER): `world/` (the ground floor: experiment files -> a
checked Experiment, its agents and personas, the task interface and registry, the event log, the
text agents are shown, probes), `tasks/` (one module per paradigm: mechanics and metrics),
`policies/` (the scripted agents), then this package's own modules: `design` (which runs
exist), `engine` (the simulated-clock loop, communication controls, visibility), `agents` (model
and scripted participants behind one interface), `run` (one run -> its directory), `paths`
(where every result lives, and the run key), `table`, `condition_stats` and `condition_figures`
(the analysis), `commands` (the `incognita collabsim` commands).
"""

# Bumped when a change alters what a run produces from the same config and seed, so the
# manifests say which engine made them.
GENERATOR_VERSION = (
    3  # 2: a probe has a seed of its own (agents.probe_seed); 3: probes after do_nothing, observations.jsonl.gz
)
