"""Customer wording the general matching cannot see (incognita.access.domains.retail.scripted.wording): payment
abbreviations, stated identifiers, asked-for absences; each on a small fixture."""

from incognita.access.domains.retail.scripted.wording import absence_score, expand_abbreviations, stated_ids


def test_payment_abbreviations_are_spelled_out_only_as_capital_words():
    assert expand_abbreviations("If not possible, refund to GC.") == "If not possible, refund to gift card."
    assert expand_abbreviations("pay by CC") == "pay by credit card"
    assert expand_abbreviations("a gc or a Gcard, DC") == "a gc or a Gcard, DC"


def test_an_all_digit_identifier_in_the_customer_words_is_stated():
    assert stated_ids(["also change item ID 1234567890 to the other one"]) == {"1234567890"}
    assert stated_ids(["it cost 25.99 for 2 items, zip 80280"]) == set()


def test_without_x_matches_an_option_value_stating_the_absence():
    resistant = {"options": {"color": "blue", "water resistance": "IPX4"}}
    absent = {"options": {"color": "blue", "water resistance": "not resistant"}}
    assert absence_score(["blue; without water resistance"], absent) == 1
    assert absence_score(["blue; without water resistance"], resistant) == 0
    assert absence_score(["no backlight"], {"options": {"backlight": "none"}}) == 1
    assert absence_score(["non-stick"], {"options": {"coating": "non-stick"}}) == 1
    assert absence_score(["without a case"], {"options": {"strap": "no"}}) == 0
    assert absence_score(["blue"], absent) == 0
