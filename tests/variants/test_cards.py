"""Card codes: canonical round trip, lenient reading, and refusal of anything else."""

import pytest

from analyzer.cards import CardError, format_card, mask_of, mask_points, parse_card, points, pretty_card, scan


def test_every_card_round_trips_through_its_code():
    for c in range(52):
        assert parse_card(format_card(c)) == c
    assert len({format_card(c) for c in range(52)}) == 52


@pytest.mark.parametrize("code,canon", [("7S", "7S"), ("td", "TD"), ("10H", "TH"), ("10♦", "TD"), ("k♣", "KC"),
                                        ("a♠", "AS"), ("Qh", "QH")])
def test_lenient_codes_read_as_the_canonical_card(code, canon):
    assert format_card(parse_card(code)) == canon


@pytest.mark.parametrize("code", ["", "1S", "7X", "11H", "S7", "77", "JOKER", "7 S", None, 7])
def test_bad_codes_are_refused(code):
    with pytest.raises(CardError):
        parse_card(code)


def test_jokers_only_when_asked():
    with pytest.raises(CardError):
        parse_card("BJ")
    assert parse_card("BJ", jokers=True) == 53 and parse_card("sj", jokers=True) == 52


def test_points_and_masks():
    assert [points(parse_card(c)) for c in ("AS", "7H", "TD", "JC", "QS", "KH")] == [1, 7, 10, 11, 12, 13]
    m = mask_of([parse_card("KH"), parse_card("AS"), parse_card("2C")])
    assert list(scan(m)) == sorted(parse_card(c) for c in ("KH", "AS", "2C"))
    assert mask_points(m) == 13 + 1 + 2
    assert pretty_card(parse_card("TD")) == "10♦"
