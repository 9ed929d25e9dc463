"""What the figures and tables show in words, colours and number formats: one vocabulary for
every figure module (incognita.access.figures) and the tables.

Arm labels and display order, outcome and measure names with their colours, the contrasts'
labels, the model palette (Okabe-Ito), and the formats of signed differences, p values,
dollars and counts. The arms' and outcomes' labels and colours are their records in
incognita.access.taxonomy; this module only arranges them for the figures.
"""

from __future__ import annotations

import numpy as np
from matplotlib.colors import to_rgb

from incognita.access import taxonomy
from incognita.access.taxonomy import DIRECT, HARNESS_ARMS, INDIRECT, NATIVE, SOCIAL, arm_label, arm_record

# --- vocabulary shown on the figures -------------------------------------------------------

# The figures import arm_label from here: a record's label, or an arm without one by its name.
ARM_LABELS = {a.name: a.label for a in taxonomy.ARM_RECORDS}
ARM_ORDER = tuple(ARM_LABELS)
CONDITIONS = HARNESS_ARMS  # the three Incognita conditions (native is an anchor)

# composition order: success, then the failure chain from first to last stage
OUTCOMES = {o.name: (o.label, o.color) for o in taxonomy.OUTCOME_RECORDS}
OTHER_OUTCOME = ("Other / unlabelled", "#f0e442")  # a label the taxonomy does not know

MEASURES = {  # the coordination chain in the order an agent meets it
    "holder_contacted": "Holder contacted",
    "role_identification": "Role identification",
    "information_acquisition": "Information acquisition",
    "customer_information": "  customer facts",
    "service_information": "  service facts",
    "execution": "Execution / assignment",
}

CONTRASTS = {  # named `<minuend>-<subtrahend>` (incognita.access.stats.interpretation), in the minuend's colour
    f"{INDIRECT}-{SOCIAL}": ("Indirect − social (primary)", arm_record(INDIRECT).color),
    f"{DIRECT}-{INDIRECT}": ("Direct − indirect", arm_record(DIRECT).color),
    f"{NATIVE}-{DIRECT}": ("Native − direct", arm_record(NATIVE).color),
}

# Okabe-Ito: distinguishable for the common colour-vision deficiencies.
MODEL_COLORS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000", "#F0E442")

ZERO_COST_NOTE = "All costs are $0: scripted (offline) backends make no paid calls."
ABSENT = "absent"


def text_color(fill: str) -> str:
    """White or black, whichever reads better on `fill` (WCAG contrast: relative luminance
    below 0.179 is dark), so a number printed on a bar follows the bar's colour."""
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in to_rgb(fill)]
    luminance = 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]
    return "white" if luminance < 0.179 else "black"


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
