"""Model entries checked before anything runs.

A config names a backend for every role (`models:` and `participants:`). A typo there used
to surface only inside a job, as a traceback, or not at all; `check_entries` finds it when
the workflow is parsed (rules/common.smk) and in `incognita check-config`, and raises one
InputError line naming the config key and the value.

What is checked: the spec has a known family; a `scripted:` spec names a profile that
exists for its role (an evaluated agent's profile in the scripted-agents file, `customer`
for the customer, `desk` for the service side) and carries no settings (a scripted
participant has no sampling to set, a customer or desk only the faults it may inject for the
participant audit's validation); an API entry's settings are its backend family's own
(`incognita.common.backends.openai.Settings`, `...anthropic.AnthropicSettings`: the check a job applies).
Every entry is parsed by `ModelEntry.parse`, the one parser the commands use too.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from incognita.common.backends.base import check_settings, known_families
from incognita.common.backends.entry import ModelEntry
from incognita.common.io import InputError, read_yaml

# The scripted participant profiles by config role (the agents' profiles come from a file).
SCRIPTED_PARTICIPANTS = {"customer": "customer", "service": "desk", "judge": "judge"}


def check_entry(
    entry: object, key: str, scripted_profiles: Iterable[str] = (), participant: str | None = None
) -> ModelEntry:
    """The entry of a valid config value (or the entry itself); InputError naming `key` (e.g.
    `models.gpt`) otherwise.

    An evaluated agent's scripted profile must be one of `scripted_profiles`; a participant
    (`customer`, `service`, `judge`) has its one scripted profile, or none."""
    parsed = ModelEntry.parse(entry, f"config key {key}")
    spec, family, name, settings = parsed.spec, parsed.family, parsed.name, dict(parsed.settings)
    families = known_families()
    if family not in families or not name:
        raise InputError(
            f"config key {key}: unknown backend family {family!r} in {spec!r} "
            f"(expected <family>:<name> with family one of {', '.join(families)})"
        )
    if family == "scripted":
        _check_scripted(key, name, settings, scripted_profiles, participant)
    else:
        check_settings(parsed, f"config key {key} ({spec})")
    return parsed


def _check_scripted(key: str, name: str, settings: dict, profiles: Iterable[str], participant: str | None) -> None:
    # A scripted customer or desk takes one setting, the faults it injects (participant_faults).
    side = {"customer": "customer", "service": "service"}.get(participant or "")
    allowed = {"faults"} if side else set()
    if set(settings) - allowed:
        raise InputError(
            f"config key {key}: scripted:{name} takes no settings"
            + (" but faults" if allowed else "")
            + f", got {', '.join(sorted(set(settings) - allowed))}"
        )
    if "faults" in settings:
        from incognita.access.episodes.scripted.participant_faults import check_faults

        try:
            check_faults(settings["faults"], side, f"config key {key}")
        except ValueError as exc:
            raise InputError(str(exc)) from None
    if participant is not None:
        expected = SCRIPTED_PARTICIPANTS.get(participant)
        if expected is None:
            raise InputError(
                f"config key {key}: there is no scripted {participant}; use an openai: or anthropic: entry, or null"
            )
        if name != expected:
            raise InputError(
                f"config key {key}: unknown scripted profile {name!r} (the scripted {participant} "
                f"is scripted:{expected})"
            )
        return
    known = sorted(profiles)
    if name not in known:
        raise InputError(
            f"config key {key}: unknown scripted profile {name!r} "
            f"(profiles in the scripted-agents file: {', '.join(known) or 'none'})"
        )


def check_entries(cfg: dict, base: str | Path = ".") -> None:
    """Every model and participant entry of a (schema-valid) config; `base` resolves the
    scripted-agents file named in it."""
    profiles_path = Path(base) / cfg["scripted_agents"]
    profiles = read_yaml(profiles_path) if profiles_path.exists() else {}
    if not isinstance(profiles, dict):
        raise InputError(f"{profiles_path}: expected a mapping of profile names to settings")
    for model, entry in (cfg.get("models") or {}).items():
        check_entry(entry, f"models.{model}", profiles)
    for role, entry in (cfg.get("participants") or {}).items():
        if entry is not None:
            check_entry(entry, f"participants.{role}", profiles, participant=role)
    from incognita.access.episodes.loop.evaluation import check_channel

    try:
        check_channel(
            (cfg.get("evaluation") or {}).get("information_channel", "substring"),
            (cfg.get("participants") or {}).get("judge"),
            "config key evaluation.information_channel",
        )
    except ValueError as exc:
        raise InputError(str(exc)) from None
