"""The retail domain's part of the participant-fidelity audit (incognita.access.domains.retail.reader):
the values of fixed shapes its participants state, retail's identifiers and the generic shapes."""

from __future__ import annotations

from incognita.access.domains.retail.reader import VALUE_SHAPES


def test_values_of_fixed_shapes_are_normalised():
    values = VALUE_SHAPES.values
    assert values("Order W1234567 costs $54.04, total 1,000.50; zip 78712.") == {
        ("order_id", "#W1234567"),
        ("amount", "5404"),
        ("amount", "100050"),
        ("zip", "78712"),
    }
    assert values('{"item_id": "6086499569", "user": "ana_lee_1234", "pay": "gift_card_1234567"}') == {
        ("item_id", "6086499569"),
        ("user_id", "ana_lee_1234"),
        ("payment_id", "gift_card_1234567"),
    }
    assert values("placed 2024-05-01 by ana.lee1@example.com for $40") == {
        ("date", "2024-05-01"),
        ("email", "ana.lee1@example.com"),
        ("amount", "4000"),
    }
