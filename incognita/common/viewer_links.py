"""Links from the statistics' Markdown tables into the trajectory viewer (results/viewer).

Both families write Markdown tables under results/; each row can link to the viewer's list of
the trials or runs behind its number. A link is relative to the table's directory, and its
filters are the viewer's own (a column and a value), so it opens from disk beside the built
site. The families decide which rows link where (incognita.access.stats.viewer_links,
incognita.collabsim.condition_stats); this module only spells the address.
"""

from __future__ import annotations

from urllib.parse import quote, urlencode

NONE = "(none)"  # the viewer's value for an empty cell (assets/table.js, NONE)


def view_href(site: str, view: str, **filters: str) -> str:
    """`site`#`view`?filters: the viewer at `site` (a relative path to its index.html)."""
    return f"{site}#{view}?{urlencode(filters, quote_via=quote)}"


def md_link(label: str, href: str) -> str:
    return f"[{label}]({href})"
