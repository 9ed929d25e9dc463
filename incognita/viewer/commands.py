"""`incognita view`: build the viewer's static site, optionally serve it on loopback."""

from __future__ import annotations

from pathlib import Path

import click

from incognita.access.domain import CONFIG_ROOT
from incognita.access.paths import EPISODES_DIR, NATIVE_DIR, REFERENCE_ROOT, TRIALS_TABLE, VIEWER_DIR
from incognita.collabsim import paths as collabsim_paths


@click.command("view")
@click.option("--out", default=VIEWER_DIR, show_default=True, help="the site's directory (replaced)")
@click.option("--trials", default=TRIALS_TABLE, show_default=True)
@click.option(
    "--domains", default=None, help="the domains of the trials, comma-separated (default: those the table names)"
)
@click.option("--reference-root", default=REFERENCE_ROOT, show_default=True, help="<root>/<domain>/coordination.json")
@click.option(
    "--domains-config",
    default=CONFIG_ROOT,
    show_default=True,
    help="<root>/<domain>/partition.yaml: who holds which tool",
)
@click.option("--episodes", default=EPISODES_DIR, show_default=True, help="episode records")
@click.option("--native", default=NATIVE_DIR, show_default=True, help="native harness results")
@click.option("--arm-registry", default="config/arms.yaml", show_default=True, help="which holder map each arm uses")
@click.option(
    "--collabsim",
    default=collabsim_paths.RESULTS,
    show_default=True,
    help="CollabSim results (runs/ and runs.parquet); skipped when absent",
)
@click.option("--no-collabsim", is_flag=True, help="leave CollabSim runs out")
@click.option("--serve", is_flag=True, help="after building, serve the site on 127.0.0.1 until interrupted")
@click.option("--port", default=8018, show_default=True, help="the loopback port for --serve (0: any free one)")
def view_command(
    out: str,
    trials: str,
    domains: str | None,
    reference_root: str,
    domains_config: str,
    episodes: str,
    native: str,
    arm_registry: str,
    collabsim: str,
    no_collabsim: bool,
    serve: bool,
    port: int,
) -> None:
    """Build the trajectory viewer (docs/viewer.md): OUT/index.html opens from disk, offline."""
    from incognita.access.domain import domain_files
    from incognita.access.paths import coordination_file
    from incognita.viewer.site import Inputs, build, trial_domains

    cs = None if no_collabsim or not collabsim_paths.runs_dir(collabsim).is_dir() else Path(collabsim)
    names = [d for d in domains.split(",") if d] if domains else trial_domains(Path(trials))
    inputs = Inputs(
        Path(trials),
        {d: coordination_file(d, reference_root) for d in names},
        Path(episodes),
        Path(native),
        {d: domain_files(d, domains_config).partition for d in names},
        cs,
        Path(arm_registry),
    )
    built = build(inputs, out)
    click.echo(
        f"{out}: {built['trials']} trials, {built['runs']} CollabSim runs, "
        f"{built['bytes'] / 1e6:.1f} MB; open {Path(out, 'index.html').resolve().as_uri()}"
    )
    if serve:
        _serve(out, port)


def _serve(out: str, port: int) -> None:
    from incognita.viewer.serve import server

    httpd = server(out, port)
    click.echo(f"serving {out} at http://127.0.0.1:{httpd.server_address[1]}/ (Ctrl-C to stop)")
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        httpd.server_close()


COMMANDS = [view_command]
