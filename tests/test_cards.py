"""The rule-based card builder on tasks of each kind."""

import pytest

from incognita.cards import build_card, split_sentences, validate_card


def card(tasks, db, meta, task_id):
    c = build_card(tasks[task_id], db, meta)
    validate_card(c, f"card {task_id}")
    return c


def fields(c):
    return {f["token"]: f["value"] for f in c["fields"]}


def test_all_114_cards_are_schema_valid(tasks, db, meta):
    for task_id in tasks:
        card(tasks, db, meta, task_id)


def test_exchange_card(tasks, db, meta):
    c = card(tasks, db, meta, "0")
    f = fields(c)
    assert f["name"] == "Yusuf Rossi" and f["zip"] == "19122" and f["order_id"] == "#W2378156"
    assert f["item:mechanical_keyboard"] == "mechanical keyboard"
    assert "clicky" in f["preference:mechanical_keyboard"]
    assert c["reference_actions"][-1]["name"] == "exchange_delivered_order_items"
    # The opening line says what kind of help, and never a field value.
    assert "exchange" in c["opening_line"]
    assert not any(v.lower() in c["opening_line"].lower() for v in f.values())


def test_return_card_with_information_channel(tasks, db, meta):
    c = card(tasks, db, meta, "2")
    assert {"item:vacuum_cleaner", "item:headphones", "item:smart_watch"} <= set(fields(c))
    assert c["information_channel"]["communicate_info"] == ["10"]


def test_cancel_card_has_reason_and_items(tasks, db, meta):
    c = card(tasks, db, meta, "16")  # cancel all pending orders 'since they are no longer needed'
    f = fields(c)
    assert f["reason"].lower().startswith("no longer need")
    assert any(a["name"] == "cancel_pending_order" for a in c["reference_actions"])


def test_modify_items_card(tasks, db, meta):
    f = fields(card(tasks, db, meta, "15"))  # pending boots to size 8
    assert "item:hiking_boots" in f


def test_modify_address_card_keeps_literal_address(tasks, db, meta):
    f = fields(card(tasks, db, meta, "17"))
    assert f["address2"] == "Suite 641" and f["order_id"] == "#W8665881"


def test_modify_payment_card(tasks, db, meta):
    task_id = next(
        t
        for t, task in tasks.items()
        if any(a["name"] == "modify_pending_order_payment" for a in task["evaluation_criteria"]["actions"] or [])
    )
    c = card(tasks, db, meta, task_id)
    assert any(f["kind"] == "payment" for f in c["fields"]), c["fields"]


def test_user_id_email_and_several_orders(tasks, db, meta):
    f = fields(card(tasks, db, meta, "46"))
    assert f["user_id"] == "daiki_johnson_9523"
    assert f["order_id"] == "9502126" and f["order_id_2"] == "9502127"


@pytest.mark.parametrize("task_id", ["24", "57"])
def test_tasks_without_reference_actions(tasks, db, meta, task_id):
    c = card(tasks, db, meta, task_id)
    assert c["reference_actions"] == []
    assert c["requests"] and c["fields"]


def test_information_request_from_persona_text(tasks, db, meta):
    c = card(tasks, db, meta, "108")  # 'You want to know how much money you can get back' sits in the persona
    assert any("how much money" in r["demand"] for r in c["requests"])


def test_withholding_instruction_is_detected(tasks, db, meta):
    assert card(tasks, db, meta, "12")["withholds_disclosure"] is True
    assert card(tasks, db, meta, "3")["withholds_disclosure"] is False  # a private persona is not withholding


def test_fallback_sentences_attach_to_their_demand():
    sentences = split_sentences(
        "You want to return the lamp. If the agent refuses, ask for a human. Also cancel the mug."
    )
    from incognita.cards import build_requests

    reqs = build_requests(sentences)
    assert [r["covers"] for r in reqs] == [[0, 1], [2]]
    assert reqs[0]["fallbacks"] == ["If the agent refuses, ask for a human."]
