"""Reading an agent's JSON reply (incognita.collabsim.world.replies)."""

from __future__ import annotations

from incognita.collabsim.world.replies import json_reply


def test_a_fenced_reply_and_a_raw_control_character_in_a_string_are_read():
    assert json_reply('```json\n{"action": "buy"}\n```') == ({"action": "buy"}, None)
    # A raw tab and newline inside a string (a JSON grammar on a llama.cpp server let one through
    # in tests/collabsim/test_local_model.py): the document is still clear.
    assert json_reply('{"message": "hold\tthe\nline"}') == ({"message": "hold\tthe\nline"}, None)


def test_what_is_not_json_says_where():
    doc, why = json_reply('{"action": buy}')
    assert doc is None and why.startswith("not JSON (Expecting value at character 11)")
    assert json_reply(None) == (None, "not JSON (Expecting value at character 0)")
