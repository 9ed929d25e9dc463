"""CollabSim's ground floor: what a run is made of before any paradigm, policy or engine exists.

Read by every other room of the family, and it imports none of them (tests/test_import_graph.py,
COLLABSIM_ORDER): `tasks/` implements the task interface here, `policies/` reads the text agents
are shown and the probes they are asked, and the top-level modules (engine, agents, design, run,
the analysis, commands) build on all three. A paradigm is reached from here only through the
registry, by name (`task.task_class`), never by an import.

Modules: `experiment` (config files -> a checked Experiment), `roster` (its agents),
`persona_library` (their personas, as runs read them), `task` (the interface the paradigms
implement, TASKS and the registry), `events` (the event log), `agent_prompts` (the text every
agent is shown), `probes` (what agents are asked about the collaboration, and when), `replies`
(reading an agent's JSON reply).
"""
