"""`incognita cache ...`: inspect and prune the shared model response cache."""

from __future__ import annotations

import time

import click

from incognita.common.cache import CACHE_ENV, DEFAULT_DIR, ResponseCache, prune, resolve_dir, select, stats
from incognita.common.io import read_yaml


def _cache_from(dir_opt: str | None, config_path: str | None) -> ResponseCache:
    configured = dir_opt
    if configured is None and config_path:
        # Only the cache key is read, so this works for either family's config file.
        doc = read_yaml(config_path) or {}
        configured = ((doc.get("cache") if isinstance(doc, dict) else None) or {}).get("dir")
    return ResponseCache(resolve_dir(configured))


def _when(ts: float | None) -> str:
    return "-" if ts is None else time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))


_dir_option = click.option(
    "--dir",
    "dir_opt",
    default=None,
    help=f"cache directory (default: the config's cache.dir, ${CACHE_ENV}, {DEFAULT_DIR})",
)
_config_option = click.option("--config", "config_path", default=None, help="read cache.dir from this config")


@click.group("cache")
def cache_group() -> None:
    """Inspect and prune the model response cache."""


@cache_group.command("stats")
@_dir_option
@_config_option
def stats_cmd(dir_opt: str | None, config_path: str | None) -> None:
    """Entries, size, models and the recorded cost of the cached calls."""
    s = stats(_cache_from(dir_opt, config_path))
    click.echo(f"{s.root}: {s.entries} entries, {s.bytes / 1e6:.2f} MB, cost when made ${s.cost_usd:.4f}")
    click.echo(f"  oldest {_when(s.oldest)}, newest {_when(s.newest)}")
    for model, n in s.models.most_common():
        click.echo(f"  model {model}: {n}")
    for role, n in s.roles.most_common():
        click.echo(f"  role {role}: {n}")
    if s.legacy:
        click.echo(f"  without a digest (written before entries carried one; served as they are): {s.legacy}")
    for path, problem in s.damaged:
        click.echo(f"  damaged {path}: {problem} (a miss; the next answer overwrites it)")


@cache_group.command("ls")
@_dir_option
@_config_option
@click.option("--model", default=None, help="only this model")
@click.option("--limit", type=int, default=50, show_default=True, help="at most this many lines (0 = all)")
def ls_cmd(dir_opt: str | None, config_path: str | None, model: str | None, limit: int) -> None:
    """One line per entry: created, model, role, tokens, cost, key."""
    rows = select(_cache_from(dir_opt, config_path), model=model)
    rows.sort(key=lambda pe: pe[1].get("created") or 0)
    for _path, e in rows[: limit or None]:
        u = e.get("usage") or {}
        click.echo(
            f"{_when(e.get('created'))}  {e.get('model', '?'):<24} {e.get('role', '?'):<8} "
            f"{u.get('prompt_tokens', 0):>7}+{u.get('completion_tokens', 0):<6} "
            f"${float(e.get('cost_usd') or 0):.5f}  {e['key'][:16]}"
        )
    if limit and len(rows) > limit:
        click.echo(f"... {len(rows) - limit} more (--limit 0 for all)")


@cache_group.command("prune")
@_dir_option
@_config_option
@click.option("--older-than", "older_than", type=float, default=None, help="entries older than this many days")
@click.option("--model", default=None, help="entries of this model")
@click.option("--dry-run", is_flag=True, help="list what would be deleted, delete nothing")
def prune_cmd(
    dir_opt: str | None, config_path: str | None, older_than: float | None, model: str | None, dry_run: bool
) -> None:
    """Delete entries by age and/or model (both must match when both are given)."""
    removed = prune(_cache_from(dir_opt, config_path), older_than, model, dry_run=dry_run)
    verb = "would delete" if dry_run else "deleted"
    click.echo(f"{verb} {len(removed)} entr{'y' if len(removed) == 1 else 'ies'}")


COMMANDS = [cache_group]
