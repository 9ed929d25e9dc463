"""The persona library as a run reads it: loaded and checked once per file version, drawn per agent.

Written by `incognita collabsim personas` (incognita.collabsim.personas builds it) into
`config/collabsim/personas.yaml`; read by the experiment (`experiment.load_personas`: an
Experiment holds the library when any agent has persona on), by the system prompt
(`agent_prompts`) and by the run's manifest (`run`). The invariant: an agent's persona is a draw
from the library by the agent's own seed alone, so the same config and seed always give the same
personas.
"""

from __future__ import annotations

import functools
import random
from pathlib import Path

from incognita.common.io import InputError, read_yaml


def load_library(path: str | Path) -> tuple[dict, ...]:
    """The library's profiles, parsed and checked once per file version and shared by every
    experiment that reads it (the workflow checks some thirty at parse time): callers read
    them and never change them."""
    path = Path(path)
    try:
        stat = path.stat()
    except OSError:
        return _checked_library(str(path), 0, 0)  # read_yaml names the problem
    return _checked_library(str(path.resolve()), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=8)
def _checked_library(path: str, mtime_ns: int, size: int) -> tuple[dict, ...]:
    doc = read_yaml(path)
    profiles = doc.get("profiles") if isinstance(doc, dict) else None
    if not isinstance(profiles, list) or not profiles:
        raise InputError(f"{path}: expected a non-empty 'profiles' list")
    for n, p in enumerate(profiles):
        if not isinstance(p, dict) or not isinstance(p.get("description"), str) or "big_five" not in p:
            raise InputError(f"{path}: profiles[{n}]: needs 'description' and 'big_five'")
    return tuple(profiles)


def persona_for(library: list[dict], seed: int, agent: str) -> dict:
    """The agent's profile: a draw from the library by the agent's own seed."""
    return library[random.Random(f"persona:{seed}:{agent}").randrange(len(library))]
