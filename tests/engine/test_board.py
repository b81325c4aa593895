"""Board loading and validation (R1.4; docs/rules.md, board)."""

import json
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from imtheboss.engine.board import (
    LETTERS,
    Board,
    BoardError,
    Choice,
    Space,
    default_board,
    load_board,
)

WORKED_EXAMPLE = Path(__file__).resolve().parents[1] / "scenarios" / "r4-r6-worked-example.json"


def letter_demand(board: Board) -> dict[str, Fraction]:
    """How often each letter is needed: 1 per required occurrence, k/n per letter of a k-of-n
    choice group."""
    demand = dict.fromkeys(LETTERS, Fraction(0))
    for space in board.spaces:
        for letter in space.required:
            demand[letter] += 1
        for choice in space.choices:
            for letter in choice.of:
                demand[letter] += Fraction(choice.k, len(choice.of))
    return demand


def valid_space(**changes):
    space = {
        "shares": 6,
        "required": ["W", "S", "C"],
        "choices": [{"k": 2, "of": ["G", "D", "L"]}],
        "investor_only": [],
    }
    space.update(changes)
    return space


def board_with(space, index=3):
    """The default board's spaces as JSON, with space ``index`` replaced."""
    spaces = default_board().to_json()
    spaces[index] = space
    return spaces


def assert_board_error(source, *fragments, space=None):
    with pytest.raises(BoardError) as info:
        load_board(source)
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"
    assert info.value.space == space
    return info.value


# --- the default board (R1.4; docs/rules.md, board) ------------------------------------------


def test_default_board_loads_with_16_spaces():
    board = load_board("default")
    assert board is default_board()  # cached
    assert len(board.spaces) == 16
    assert all(isinstance(space, Space) for space in board.spaces)
    assert "reconstruction" in board.provenance


def test_default_board_follows_the_known_facts():
    """R1.4, board: 2 to 5 investors; 2/3/4/6 shares for 2/3/4/5; mostly choices; no
    investor-only letters."""
    board = default_board()
    shares_for = {2: 2, 3: 3, 4: 4, 5: 6}
    for space in board.spaces:
        assert space.shares == shares_for[space.investor_count]
        assert space.investor_only == ()
    fixed = [space for space in board.spaces if not space.choices]
    assert 1 <= len(fixed) < len(board.spaces) // 2
    sizes = sorted(space.investor_count for space in board.spaces)
    assert set(sizes) == {2, 3, 4, 5}


def test_default_board_has_the_known_spaces():
    """Face 2 Face (the rule texts' worked example): W, S, C + 2 of {G, D, L}, 6 shares. 2014
    edition: one letter + 4 of the other five."""
    spaces = default_board().spaces
    face2face = [
        s
        for s in spaces
        if set(s.required) == {"W", "S", "C"}
        and len(s.choices) == 1
        and s.choices[0].k == 2
        and set(s.choices[0].of) == {"G", "D", "L"}
    ]
    assert len(face2face) == 1
    assert face2face[0].shares == 6

    one_plus_four = [
        s
        for s in spaces
        if len(s.required) == 1
        and len(s.choices) == 1
        and s.choices[0].k == 4
        and set(s.choices[0].of) == set(LETTERS) - set(s.required)
    ]
    assert len(one_plus_four) == 1


def test_default_board_is_balanced():
    """docs/rules.md, board: each letter is needed about equally often (within 10%)."""
    demand = letter_demand(default_board())
    assert max(demand.values()) <= Fraction(11, 10) * min(demand.values()), demand


def test_default_board_round_trips_through_json():
    board = default_board()
    assert load_board(board.to_json()).spaces == board.spaces
    assert load_board(json.loads(json.dumps(board.to_dict()))) == board


def test_to_json_is_the_scenario_format():
    space = default_board().to_json()[0]
    assert set(space) == {"shares", "required", "choices", "investor_only"}
    assert all(set(choice) == {"k", "of"} for choice in space["choices"])


def test_space_letters_and_investor_count():
    space = Space(shares=6, required=("W", "S", "C"), choices=(Choice(2, ("G", "D", "L")),))
    assert space.letters == LETTERS
    assert space.investor_count == 5


# --- other sources -----------------------------------------------------------------------------


def test_worked_example_board_validates():
    """The 16-space board of the rule texts' worked-example scenario is a valid board (R1.4)."""
    spaces = json.loads(WORKED_EXAMPLE.read_text(encoding="utf-8"))["board"]
    board = load_board(spaces)
    assert board.to_json() == spaces


def test_load_from_file(tmp_path):
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(default_board().to_json()), encoding="utf-8")
    board = load_board(path)
    assert board.name == "mine"
    assert board.spaces == default_board().spaces
    assert load_board(str(path)) == board


def test_optional_keys_default_to_empty():
    spaces = board_with({"shares": 2, "required": ["C", "D"]})
    space = load_board(spaces).spaces[3]
    assert space.choices == () and space.investor_only == ()


def test_investor_only_letters_are_kept():
    """R1.4: the newer edition's investor-card-only letters stay in the format."""
    spaces = board_with(valid_space(investor_only=["W", "G"]))
    assert load_board(spaces).spaces[3].investor_only == ("W", "G")


@st.composite
def spaces(draw):
    """A valid space in the docs/scenarios.md format (R1.4): 2 to 5 investors, disjoint letters."""
    order = draw(st.permutations(LETTERS))
    n_required = draw(st.integers(0, 3))
    required = list(order[:n_required])
    choices = []
    if n_required < 2 or draw(st.booleans()):
        of_size = draw(st.integers(3 if n_required == 0 else 2, 6 - n_required))
        of = list(order[n_required : n_required + of_size])
        k = draw(st.integers(max(1, 2 - n_required), min(of_size - 1, 5 - n_required)))
        choices.append({"k": k, "of": of})
    used = required + [letter for choice in choices for letter in choice["of"]]
    return {
        "shares": draw(st.integers(1, 12)),
        "required": required,
        "choices": choices,
        "investor_only": draw(st.lists(st.sampled_from(used), unique=True, max_size=2)),
    }


@given(st.lists(spaces(), min_size=16, max_size=16))
def test_any_valid_board_round_trips(board_spaces):
    """R1.4: whatever a validated board holds survives to_json -> load_board."""
    board = load_board(board_spaces)
    assert board.to_json() == board_spaces
    assert load_board(board.to_json()) == board


# --- errors: each names the problem and the space (R1.4: validated on load) ---------------------


def test_wrong_number_of_spaces():
    assert_board_error(default_board().to_json()[:15], "wrong number of spaces", "expected 16")
    spaces = default_board().to_json()
    assert_board_error(spaces + spaces[:1], "wrong number of spaces", "got 17")


def test_bad_letter():
    spaces = board_with(valid_space(required=["W", "S", "X"]))
    assert_board_error(spaces, "bad letter 'X' in space 3", space=3)
    spaces = board_with(valid_space(choices=[{"k": 2, "of": ["G", "D", "l"]}]), index=5)
    assert_board_error(spaces, "bad letter 'l' in space 5", space=5)
    spaces = board_with(valid_space(investor_only=["Q"]))
    assert_board_error(spaces, "bad letter 'Q' in space 3", space=3)


@pytest.mark.parametrize("k", [0, -1, 3, 4])
def test_impossible_choice_group(k):
    spaces = board_with(valid_space(required=["W", "S"], choices=[{"k": k, "of": ["G", "D", "L"]}]))
    assert_board_error(spaces, "impossible choice group in space 3", space=3)


def test_unknown_key():
    spaces = board_with(valid_space(payout=6), index=7)
    assert_board_error(spaces, "unknown key 'payout'", "space 7", space=7)
    spaces = board_with(valid_space(choices=[{"k": 2, "of": ["G", "D", "L"], "n": 3}]))
    assert_board_error(spaces, "unknown key 'n'", "space 3", space=3)
    assert_board_error(
        {"spaces": default_board().to_json(), "author": "me"}, "unknown key 'author'"
    )


def test_missing_key():
    space = valid_space()
    del space["shares"]
    assert_board_error(board_with(space, 0), "missing key 'shares'", "space 0", space=0)
    space = valid_space(choices=[{"of": ["G", "D", "L"]}])
    assert_board_error(board_with(space), "missing key 'k'", "space 3", space=3)


@pytest.mark.parametrize(
    ("required", "choices", "fragment"),
    [
        (["W", "S", "W"], [], "'W' repeated in required"),
        (["W", "S"], [{"k": 2, "of": ["G", "S", "L"]}], "'S' is both in required and in choice"),
        (["W"], [{"k": 1, "of": ["G", "D"]}, {"k": 1, "of": ["D", "L"]}], "'D' is both in choice"),
        (["W"], [{"k": 1, "of": ["G", "G", "L"]}], "'G' repeated in choice group 0"),
    ],
)
def test_overlapping_letters(required, choices, fragment):
    spaces = board_with(valid_space(required=required, choices=choices))
    assert_board_error(spaces, "overlapping letters in space 3", fragment, space=3)


@pytest.mark.parametrize("shares", [0, -2, 2.5, "6", True, None])
def test_bad_shares(shares):
    spaces = board_with(valid_space(shares=shares), index=15)
    assert_board_error(spaces, "bad shares", "space 15", space=15)


def test_too_few_investors():
    spaces = board_with(valid_space(required=["W"], choices=[]))
    assert_board_error(spaces, "too few investors in space 3", space=3)


def test_too_many_investors():
    spaces = board_with(valid_space(required=list(LETTERS), choices=[]))
    assert_board_error(spaces, "too many investors in space 3", space=3)


def test_letters_must_be_a_list():
    spaces = board_with(valid_space(choices=[{"k": 2, "of": "GDL"}]))
    assert_board_error(spaces, "choice group 0 in space 3 must be a list of letters", space=3)


def test_investor_only_letter_must_be_used():
    spaces = board_with(valid_space(required=["W", "S"], choices=[{"k": 1, "of": ["G", "D"]}]))
    spaces[3]["investor_only"] = ["C"]
    assert_board_error(spaces, "investor-only letter 'C'", "space 3", space=3)


def test_space_must_be_an_object():
    spaces = board_with(["W", "S", "C"], index=2)
    assert_board_error(spaces, "space 2 must be an object", space=2)


def test_bad_file_path(tmp_path):
    missing = tmp_path / "nope.json"
    assert_board_error(missing, "cannot read board file", "nope.json")
    assert_board_error(str(tmp_path), "cannot read board file")  # a directory


def test_invalid_json(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('[{"shares": 2,', encoding="utf-8")
    assert_board_error(path, "invalid JSON", "broken.json")


def test_not_a_board():
    assert_board_error(42, "a board must be a list of 16 spaces")
    assert_board_error({"spaces": default_board().to_json(), "name": 7}, "name must be a string")


def test_board_error_is_a_value_error():
    assert issubclass(BoardError, ValueError)
    with pytest.raises(ValueError):
        load_board(default_board().to_json()[:3])
