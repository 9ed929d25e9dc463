"""The four paradigms, one module each (`TASK`): mechanics and metrics.

Each implements `incognita.collabsim.world.task.Task` and is named in its TASKS; the experiment,
the engine and the analysis reach a paradigm only through `world.task.task_class`, by name, and
its scripted policy (`policies/<name>.py`) may import it for its geometry or rules.
"""
