"""The decorrelation of retail's desk names (incognita.access.domains.retail.desk_order): the
alphabetical order the desks are offered in says nothing about where their capabilities come."""

from __future__ import annotations

from pathlib import Path

from incognita.access.domains.retail.desk_order import SOCIAL_DESKS, decorrelation_report
from incognita.access.reference.partition import load_partition

PARTITION = Path(__file__).resolve().parents[4] / "config" / "domains" / "retail" / "partition.yaml"


def test_the_desks_are_the_social_maps():
    assert load_partition(PARTITION).desks("social") == SOCIAL_DESKS


def test_desk_names_are_decorrelated_from_the_workflow_order():
    rows = {r["order"]: r for r in decorrelation_report(load_partition(PARTITION))}
    assert abs(rows["workflow"]["rho"]) < 0.1
    assert abs(rows["workflow_reversed"]["rho"]) < 0.1
    # No guessable order is significantly aligned with alphabetical desk order.
    assert all(r["p_exact"] > 0.1 for r in rows.values())
