"""Experiment files -> a checked Experiment.

A task folder under the CollabSim config root (`config/collabsim/<task>/`) holds
`baseline.yaml`, a complete experiment, and one file per condition that `extends` it and
`set`s dotted key paths (the one change the condition makes). Both are validated by JSON
schemas; then the task checks its own parameters, every model entry is checked (known family,
a scripted profile that exists, openai settings that parse) and every prompt file must exist.
Any problem stops with one line naming the file and the key.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from incognita.collabsim.world.events import canonical
from incognita.collabsim.world.persona_library import load_library
from incognita.collabsim.world.probes import ProbeSettings, Template, load_template
from incognita.collabsim.world.roster import AgentSpec, expand_agents
from incognita.collabsim.world.task import task_class
from incognita.common.backends.base import check_settings, known_families
from incognita.common.backends.entry import ModelEntry
from incognita.common.io import InputError, read_yaml_cached, sha256_text
from incognita.common.schema import validate

PACKAGE = "incognita.collabsim"
PROFILES_DIR = "scripted"  # <root>/scripted/<task>.yaml: profile name -> knobs


@dataclass(frozen=True)
class Communication:
    mode: str = "broadcast"  # broadcast | direct
    max_messages_per_turn: int = 1
    max_words: int | None = None
    min_actions_between: int = 0
    min_seconds_between: int = 0


@dataclass(frozen=True)
class ExperimentProtocol:
    """The config's `protocol`: how a run proceeds (who acts when, simulated seconds per step,
    the step limit, actions per turn, the stop after idle steps)."""

    turn_taking: str
    step_seconds: int
    max_steps: int
    actions_per_turn: int = 1
    stop_after_idle_steps: int | None = None


@dataclass(frozen=True)
class Experiment:
    task: str
    condition: str
    variable: str
    description: str
    agents: tuple[AgentSpec, ...]
    communication: Communication
    observes: dict[str, tuple[str, ...]]  # agent id -> the agent ids whose actions and state it sees
    action_space: dict[str, tuple[str, ...]]  # role -> the task actions it may use
    protocol: ExperimentProtocol
    params: dict
    prompts: dict[str, Path]  # role -> instructions file
    profiles: dict  # scripted profile name -> its knobs for this task
    resolved: dict  # the effective config after extends/set and model overrides (what is hashed)
    source: Path  # the file it was loaded from
    design: str = "persona"  # persona | theory (adds the collaboration module to every agent)
    probe: ProbeSettings = ProbeSettings()
    probe_template: Template | None = None
    personas: tuple[dict, ...] = ()  # the persona library (when any agent has persona on)
    collaboration_module: Path | None = None  # the module's text file, for the theory design
    models_override: dict | None = None  # role or "*" -> the entry as a config value (manifests, replays)

    @property
    def config_hash(self) -> str:
        return sha256_text(canonical(self.resolved))

    def agent(self, agent_id: str) -> AgentSpec:
        return next(a for a in self.agents if a.id == agent_id)


def config_root(path: Path) -> Path:
    """The CollabSim config folder: the parent of the task folders."""
    return path.parent.parent


def load_experiment(path: str | Path, models: dict | None = None, design: str | None = None) -> Experiment:
    """Read a baseline or condition file; `models` ({role or '*': a ModelEntry, or a config value
    such as a manifest's models_override}) replaces agents' models and `design` (persona or
    theory) the file's agent design."""
    path = Path(path)
    resolved = resolve_file(path)
    overrides = None
    if models:
        # The entries go into the resolved config (hashed, written to the manifest) as config values.
        where = f"{path}: collabsim.models"
        overrides = {role: ModelEntry.parse(e, f"{where}.{role}").to_config() for role, e in models.items()}
        resolved = override_models(resolved, overrides, str(path))
    if design is not None:
        resolved = {**resolved, "design": design}
    validate(resolved, "experiment.schema.json", f"{path} (resolved)", package=PACKAGE)
    return replace(build(resolved, path), models_override=overrides)


def resolve_file(path: Path) -> dict:
    doc = read_yaml_cached(path)
    if not isinstance(doc, dict):
        raise InputError(f"{path}: expected a mapping")
    if "extends" not in doc:
        return doc
    validate(doc, "condition.schema.json", str(path), package=PACKAGE)
    base_path = path.with_name(f"{doc['extends']}.yaml")
    if not base_path.exists():
        raise InputError(f"{path}: extends: no file {base_path}")
    base = read_yaml_cached(base_path)
    if not isinstance(base, dict) or "extends" in base:
        raise InputError(f"{base_path}: a baseline is a complete experiment (it cannot extend another file)")
    out = copy.deepcopy(base)
    for key, value in doc["set"].items():
        set_path(out, key, copy.deepcopy(value), f"{path}: set.{key}")
    out["variable"], out["description"] = doc["variable"], doc["description"]
    return out


def set_path(doc: dict, dotted: str, value: Any, where: str) -> None:
    """doc[a][b][0] = value for 'a.b.0'; the parent must exist (a typo is an error, not a new key)."""
    parts = dotted.split(".")
    node: Any = doc
    for part in parts[:-1]:
        node = _child(node, part, where)
    last = parts[-1]
    if isinstance(node, list):
        if not last.isdigit() or int(last) >= len(node):
            raise InputError(f"{where}: no list item {last}")
        node[int(last)] = value
    elif isinstance(node, dict):
        node[last] = value
    else:
        raise InputError(f"{where}: cannot set a key inside a {type(node).__name__}")


def _child(node: Any, part: str, where: str) -> Any:
    if isinstance(node, list) and part.isdigit() and int(part) < len(node):
        return node[int(part)]
    if isinstance(node, dict) and part in node:
        return node[part]
    raise InputError(f"{where}: the baseline has no {part!r} there")


def override_models(resolved: dict, models: dict, where: str) -> dict:
    out = copy.deepcopy(resolved)
    roles = {a.get("role") for a in out.get("agents", [])}
    unknown = sorted(set(models) - roles - {"*"})
    if unknown:
        raise InputError(
            f"{where}: collabsim.models: no agent role {', '.join(map(repr, unknown))} in this task "
            f"(roles: {', '.join(sorted(roles))})"
        )
    for agent in out.get("agents", []):
        entry = models.get(agent.get("role"), models.get("*"))
        if entry is not None:
            agent["model"] = entry
    return out


def build(resolved: dict, path: Path) -> Experiment:
    root = config_root(path)
    agents = expand_agents(resolved["agents"], f"{path}: ")
    ids = [a.id for a in agents]
    if len(set(ids)) != len(ids):
        raise InputError(f"{path}: agents: duplicate agent ids {sorted({i for i in ids if ids.count(i) > 1})}")
    cls = task_class(resolved["task"], f"{path}: task")
    cls.check_params(resolved["task_params"], agents, f"{path}: task_params")
    action_space = check_action_space(resolved.get("action_space") or {}, cls, agents, path)
    prompts = check_prompts(resolved["prompts"], agents, root, path)
    profiles = check_models(agents, resolved["task"], root, path)
    condition = "baseline" if resolved["variable"] == "baseline" else path.stem
    return Experiment(
        task=resolved["task"],
        condition=condition,
        variable=resolved["variable"],
        description=resolved["description"],
        agents=agents,
        communication=Communication(**resolved["communication"]),
        observes=resolve_observes(resolved.get("visibility", {}).get("observes", {}), agents, path),
        action_space=action_space,
        protocol=ExperimentProtocol(**resolved["protocol"]),
        params=resolved["task_params"],
        prompts=prompts,
        profiles=profiles,
        resolved=resolved,
        source=path,
        design=resolved.get("design", "persona"),
        **probe_settings(resolved.get("probe"), root, path),
        personas=load_personas(agents, root),
        collaboration_module=module_file(resolved.get("design", "persona"), root),
    )


def check_action_space(space: dict, cls, agents: tuple[AgentSpec, ...], path: Path) -> dict[str, tuple[str, ...]]:
    """role -> its usable task actions: the configured subset, or all of the role's."""
    out = {}
    for role in sorted({a.role for a in agents}):
        own = cls.actions[role]
        chosen = space.get(role, own)
        extra = sorted(set(chosen) - set(own))
        if extra:
            raise InputError(
                f"{path}: action_space.{role}: {', '.join(extra)} not among the role's actions ({', '.join(own)})"
            )
        out[role] = tuple(a for a in own if a in chosen)
    unknown = sorted(set(space) - set(out))
    if unknown:
        raise InputError(f"{path}: action_space: no agent has role {', '.join(unknown)}")
    return out


def probe_settings(probe: dict | None, root: Path, path: Path) -> dict:
    if not probe or probe["cadence"] == "off":
        return {"probe": ProbeSettings(), "probe_template": None}
    if "questions" not in probe:
        raise InputError(f"{path}: probe.questions: a probe template is needed when probing is on")
    file = root / probe["questions"]
    if not file.is_file():
        raise InputError(f"{path}: probe.questions: missing probe template {file}")
    settings = ProbeSettings(
        probe["cadence"],
        probe.get("every_n", 1),
        tuple(probe.get("events", ())),
        file,
        probe.get("after_do_nothing", True),
    )
    return {"probe": settings, "probe_template": load_template(file)}


PERSONAS_FILE = "personas.yaml"
MODULE_FILE = "prompts/collaboration_module.md"


def module_file(design: str, root: Path) -> Path | None:
    if design != "theory":
        return None
    path = root / MODULE_FILE
    if not path.is_file():
        raise InputError(f"{path}: missing collaboration module (design: theory)")
    return path


def load_personas(agents: tuple[AgentSpec, ...], root: Path) -> tuple[dict, ...]:
    if not any(a.persona for a in agents):
        return ()
    path = root / PERSONAS_FILE
    if not path.is_file():
        raise InputError(f"{path}: missing persona library (agents have persona: true)")
    return load_library(path)


def check_prompts(prompts: dict, agents: tuple[AgentSpec, ...], root: Path, path: Path) -> dict[str, Path]:
    out = {}
    for role in sorted({a.role for a in agents}):
        if role not in prompts:
            raise InputError(f"{path}: prompts: no instructions file for role {role!r}")
        file = root / prompts[role]
        if not file.is_file():
            raise InputError(f"{path}: prompts.{role}: missing prompt file {file}")
        out[role] = file
    return out


def check_models(agents: tuple[AgentSpec, ...], task: str, root: Path, path: Path) -> dict:
    """Every entry must build: a known family, an existing scripted profile, valid openai settings.
    Returns the task's scripted profiles (name -> knobs)."""
    profiles_path = root / PROFILES_DIR / f"{task}.yaml"
    profiles: dict | None = None
    families = known_families()
    for agent in agents:
        where = f"{path}: agent {agent.id} model"
        entry = agent.model  # parsed when the agents were expanded
        spec, family, name, settings = entry.spec, entry.family, entry.name, entry.settings
        if family not in families:
            raise InputError(
                f"{where}: unknown backend family {family!r} in {spec!r} (expected one of {', '.join(families)})"
            )
        if family == "scripted":
            if settings:
                raise InputError(f"{where}: scripted entries take no settings (got {', '.join(sorted(settings))})")
            if profiles is None:
                profiles = read_yaml_cached(profiles_path) if profiles_path.exists() else {}
            if not isinstance(profiles.get(name), dict):
                raise InputError(f"{where}: no scripted profile {name!r} in {profiles_path}")
        else:
            try:
                check_settings(entry, where)
            except ValueError as exc:
                raise InputError(str(exc)) from None
    return profiles or {}


def resolve_observes(observes: dict, agents: tuple[AgentSpec, ...], path: Path) -> dict[str, tuple[str, ...]]:
    def members(name: str) -> set[str]:
        if name == "*":
            return {a.id for a in agents}
        found = {a.id for a in agents if a.id == name or a.role == name}
        if not found:
            raise InputError(f"{path}: visibility.observes: {name!r} is neither an agent id nor a role")
        return found

    out: dict[str, set[str]] = {a.id: set() for a in agents}
    for who, whom in observes.items():
        seen = set().union(*(members(w) for w in whom)) if whom else set()
        for agent in members(who):
            out[agent] |= seen - {agent}
    return {a: tuple(sorted(s)) for a, s in out.items()}


def model_params(exp: Experiment) -> dict[str, str]:
    """agent id -> the one-string form of its entry (for manifests and workflow params)."""
    return {a.id: a.model.param for a in exp.agents}


_CONDITION = re.compile(r"^[a-z0-9_]+$")


def condition_files(root: str | Path, task: str) -> list[str]:
    """A task's conditions: baseline first, then the other files of its folder by name."""
    folder = Path(root) / task
    names = sorted(p.stem for p in folder.glob("*.yaml") if _CONDITION.match(p.stem))
    if "baseline" not in names:
        raise InputError(f"{folder}: no baseline.yaml")
    return ["baseline"] + [n for n in names if n != "baseline"]
