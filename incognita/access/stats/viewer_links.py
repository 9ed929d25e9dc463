"""From a number to its trials: the Markdown tables of results/stats/ link each row to the
filtered list of the trials behind it in the viewer (results/viewer, docs/viewer.md).

A link is relative to results/stats/ (`../viewer/index.html#trials?arm=...&model=...`), so it
opens from disk beside the built site; the filters are the index's own (a column and a value,
`(none)` for an empty one), so the list is exactly the rows the number counts. The CSV tables
stay plain data; only their Markdown copies get the `trials` column. A domain's own tables
(results/stats/<domain>/, a design of several domains) link one level further up, to the
trials of that domain only (the index's `domain` filter first).
"""

from __future__ import annotations

import pandas as pd

from incognita.access.taxonomy import EXCLUDED, FAILED_UNLABELLED, SUCCESS
from incognita.common.viewer_links import NONE, md_link, view_href

VIEWER = "../viewer/index.html"  # from results/stats/
DOMAIN_VIEWER = "../../viewer/index.html"  # from results/stats/<domain>/
# A composition outcome as the index's filter: success and excluded are outcomes; a failure
# type is its own column; a failure the reader does not label (native) has none.
_OUTCOME_FILTER = {SUCCESS: {"outcome": "success"}, EXCLUDED: {"outcome": "excluded"}}


def _linker(domain: str | None):
    def link(label: str, **filters: str) -> str:
        """A link to the viewer's index filtered by column=value pairs (in that order)."""
        if domain is None:
            return md_link(label, view_href(VIEWER, "trials", **filters))
        return md_link(label, view_href(DOMAIN_VIEWER, "trials", domain=domain, **filters))

    return link


def _composition_filter(outcome: str) -> dict[str, str]:
    if outcome in _OUTCOME_FILTER:
        return _OUTCOME_FILTER[outcome]
    if outcome == FAILED_UNLABELLED:
        return {"outcome": "failed", "failure_type": NONE}
    return {"failure_type": outcome}


def with_links(name: str, table: pd.DataFrame, domain: str | None = None) -> pd.DataFrame | None:
    """The Markdown copy of stats table `name`, with a `trials` column of links (None: as is);
    `domain`: the table is that domain's own (its links keep to its trials)."""
    if table.empty:
        return None
    _link = _linker(domain)
    md = table.copy()
    if name == "success":
        md["trials"] = [_link("trials", arm=a, model=m) for a, m in zip(md["arm"], md["model"])]
    elif name == "composition":
        md["trials"] = [
            _link("trials", arm=a, model=m, **_composition_filter(o)) if n else ""
            for a, m, o, n in zip(md["arm"], md["model"], md["outcome"], md["count"])
        ]
    elif name == "separability":
        md["trials"] = [
            f"{_link(a_, arm=arm, model=a_)}, {_link(b_, arm=arm, model=b_)}"
            for arm, a_, b_ in zip(md["arm"], md["model_a"], md["model_b"])
        ]
    elif name == "attribution":
        md["trials"] = [
            _link("trials", arm=a, **({} if m == "all" else {"model": m}), failure_type=f)
            for a, m, f in zip(md["arm"], md["model"], md["failure_type"])
        ]
    elif name == "participant_fidelity":
        # Its `trials` is a count (the audited trials), so the link gets a column of its own, to
        # the trials with a finding of the row's kind (none when no trial has one).
        md["with_finding"] = [
            _link(
                f"{n} trial{'' if n == 1 else 's'}",
                arm=a,
                **({} if m == "all" else {"model": m}),
                **{f"findings_{k}": ">0"},
            )
            if n
            else ""
            for a, m, k, n in zip(md["arm"], md["model"], md["finding"], md["trials_with"])
        ]
    else:
        return None
    return md
