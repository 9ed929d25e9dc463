"""The `incognita` command line: one click group, one subcommand per stage.

Snakemake rules call these same commands, so what a rule does is what a user can run.
"""

from __future__ import annotations

import inspect
import signal
import sys
import threading

import click

from incognita.common.io import InputError, WriteError


def _terminate(signum, frame) -> None:
    # Python's default SIGTERM kills the process on the spot: cleanup handlers never run, and a
    # temp file being written (incognita.common.io.atomic_write) stays behind. As an exception
    # the job still ends at once, but on its way out the partial file is removed.
    raise SystemExit(128 + signum)


class _Group(click.Group):
    """Turn InputError into a one-line message and exit code 2, and a failed write (disk full)
    into one line and exit code 1, instead of a traceback; SIGTERM ends the command cleanly."""

    def invoke(self, ctx):
        main_thread = threading.current_thread() is threading.main_thread()
        previous = signal.signal(signal.SIGTERM, _terminate) if main_thread else None
        try:
            return super().invoke(ctx)
        except InputError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(2)
        except WriteError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(1)
        finally:
            if previous is not None:  # None: the old handler was not set from Python, nothing to restore
                signal.signal(signal.SIGTERM, previous)


def _print_version(ctx: click.Context, _param, value: bool) -> None:
    # Computed only when asked: the source hash and git call cost ~30 ms, and every job starts this CLI.
    if not value or ctx.resilient_parsing:
        return
    from incognita.common.environment import describe

    click.echo(describe())
    ctx.exit()


@click.group(cls=_Group)
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Show the version and exit.",
)
def main() -> None:
    """Incognita: access-structure transformation of tau-bench retail tasks."""


# Each package owns its commands: a `commands.py` with a COMMANDS list. This file only
# assembles them, in the order data flows (help output sorts them by name).
COMMAND_MODULES = (
    "incognita.access.planning.commands",
    "incognita.access.cards.commands",
    "incognita.access.golden.commands",
    "incognita.access.reference.commands",
    "incognita.access.selection.commands",
    "incognita.access.episodes.commands",
    "incognita.access.native.commands",
    "incognita.access.reader.commands",
    "incognita.access.stats.commands",
    "incognita.access.figures.commands",
    "incognita.collabsim.commands",
    "incognita.common.commands",
    "incognita.viewer.commands",
)


def _register() -> None:
    import importlib

    for name in COMMAND_MODULES:
        for command in importlib.import_module(name).COMMANDS:
            main.add_command(command)
    # `incognita estimate` takes either family's design; the access package may not import
    # CollabSim, so the one command that sees both packages routes it.
    main.add_command(
        _estimate_either_family(main.commands["estimate"], main.commands["collabsim"].commands["estimate"])
    )


def is_collabsim_design(doc) -> bool:
    """A CollabSim design file (config/collabsim/*.yaml): a `collabsim` section and no access `design`."""
    return isinstance(doc, dict) and "collabsim" in doc and "design" not in doc


def _estimate_either_family(access: click.Command, collabsim: click.Command) -> click.Command:
    @click.pass_context
    def route(ctx: click.Context, **given):
        from click.core import ParameterSource

        from incognita.common.io import read_yaml

        if not is_collabsim_design(read_yaml(given["config_path"])):
            return ctx.invoke(access, **given)
        shared = {p.name for p in collabsim.params}
        access_only = [
            p.opts[0]
            for p in access.params
            if p.name not in shared and ctx.get_parameter_source(p.name) is not ParameterSource.DEFAULT
        ]
        if access_only:
            raise InputError(
                f"{given['config_path']}: a CollabSim design; {', '.join(access_only)} apply to the access "
                "family's estimate only"
            )
        return ctx.invoke(collabsim, **{name: given[name] for name in shared})

    return click.Command(
        "estimate",
        callback=route,
        params=access.params,
        help=f"{inspect.cleandoc(access.help or '')}\n\nGiven a CollabSim design (config/collabsim/*.yaml), the same as "
        "`incognita collabsim estimate`.",
        short_help=access.get_short_help_str(),
    )


_register()
