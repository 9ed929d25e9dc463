"""What the figures and tables show in words, colours and number formats: one vocabulary for
every figure module (incognita.access.figures) and the tables.

Arm labels and display order, outcome and measure names with their colours, the contrasts'
labels, the model palette (Okabe-Ito), and the formats of signed differences, p values,
dollars and counts.
"""

from __future__ import annotations

import numpy as np

from incognita.access.taxonomy import HARNESS_ARMS

# --- vocabulary shown on the figures -------------------------------------------------------

ARM_LABELS = {
    "direct": "Centralized (direct)",
    "indirect": "Centralized (indirect)",
    "social": "Socially distributed",
    "native": "Native anchor",
}
ARM_ORDER = tuple(ARM_LABELS)
CONDITIONS = HARNESS_ARMS  # the three Incognita conditions (native is an anchor)

OUTCOMES = {  # composition order: success, then the failure chain from first to last stage
    "success": ("Success", "#1b7837"),
    "never_requested": ("1 Never requested", "#b2182b"),
    "requested_not_obtained": ("2 Requested, not obtained", "#ef8a62"),
    "obtained_not_delivered": ("3 Obtained, not delivered", "#fddbc7"),
    "delivered_incorrect": ("4 Delivered, incorrect", "#67a9cf"),
    "correct_unconfirmed": ("5 Correct, unconfirmed", "#2166ac"),
    "failed_unlabelled": ("Failed, no type (native harness)", "#9e9ac8"),
    "excluded": ("Excluded (broke outside the agent)", "#bdbdbd"),
}
OTHER_OUTCOME = ("Other / unlabelled", "#f0e442")

MEASURES = {  # the coordination chain in the order an agent meets it
    "holder_contacted": "Holder contacted",
    "role_identification": "Role identification",
    "information_acquisition": "Information acquisition",
    "customer_information": "  customer facts",
    "service_information": "  service facts",
    "execution": "Execution / assignment",
}

CONTRASTS = {
    "indirect-social": ("Indirect − social (primary)", "#0072B2"),
    "direct-indirect": ("Direct − indirect", "#E69F00"),
    "native-direct": ("Native − direct", "#009E73"),
}

# Okabe-Ito: distinguishable for the common colour-vision deficiencies.
MODEL_COLORS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000", "#F0E442")

ZERO_COST_NOTE = "All costs are $0: scripted (offline) backends make no paid calls."
ABSENT = "absent"


def arm_label(arm: str) -> str:
    return ARM_LABELS.get(arm, arm)


def arm_tick(arm: str) -> str:
    """Two-line label for crowded category axes."""
    return arm_label(arm).replace(" (", "\n(").replace("Socially ", "Socially\n").replace("Native ", "Native\n")


def fmt_signed(x: float, digits: int = 3) -> str:
    return "—" if not np.isfinite(x) else f"{x:+.{digits}f}".replace("-", "−")


def fmt_p(p: float) -> str:
    if not np.isfinite(p):
        return "—"
    return "<0.00001" if p < 0.00001 else f"{p:.5f}"


def fmt_usd(x: float, digits: int = 0) -> str:
    return "—" if not np.isfinite(x) else f"${x:,.{digits}f}"


def fmt_count(x: float) -> str:
    return "—" if not np.isfinite(x) else f"{x:,.0f}"
