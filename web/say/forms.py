"""Flask-WTF forms of the pages: creating a game and a seat's settings (CSRF included)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from flask_babel import lazy_gettext as _l
from flask_wtf import FlaskForm
from flask_wtf.file import FileField
from imtheboss.engine import languages
from imtheboss.engine.options import DEFAULT_WINDOWS, MAX_PROXY_HOURS, VARIANT_TABLE
from imtheboss.engine.orders import DEFAULT_PACE
from imtheboss.engine.quiet import night_hours
from imtheboss.web.say.display import valid_timezone
from wtforms import (
    BooleanField,
    DecimalField,
    EmailField,
    FieldList,
    Form,
    FormField,
    IntegerField,
    RadioField,
    SelectField,
    SelectMultipleField,
    StringField,
)
from wtforms.validators import (
    InputRequired,
    Length,
    NumberRange,
    Optional,
    StopValidation,
    ValidationError,
)
from wtforms.widgets import CheckboxInput, ListWidget, NumberInput

try:
    from wtforms.fields.choices import SelectChoice
except ImportError:  # WTForms before 3.3 takes (value, label) pairs

    def SelectChoice(value: str, label: Any) -> tuple[str, Any]:  # noqa: N802
        return (value, label)


MAX_PLAYERS = 6
MAX_WINDOW_HOURS = 720  # 30 days (imtheboss.engine.options: 2,592,000 seconds at most)


class MultiCheckboxField(SelectMultipleField):
    """Several checkboxes, one per choice."""

    widget = ListWidget(prefix_label=False)
    option_widget = CheckboxInput()


LANGUAGE_CODES = languages.CODES
LANGUAGE_CHOICES = [SelectChoice("", _l("As my browser asks"))] + [
    SelectChoice(row.code, row.name) for row in languages.LANGUAGES
]


def _row_used(row: Any) -> bool:
    """A player row of ``/new`` filled in: a name, an address or the bot choice."""
    return bool((row.name.data or "").strip() or (row.email.data or "").strip() or row.bot.data)


class PlayerRow(Form):
    """One player of a new game: name, email and the language of their invitation and mail
    (a row without name and email is skipped; the language defaults to the organiser's page
    language, ``NewGameForm.default_languages``)."""

    name = StringField(_l("Name"), [Optional(), Length(max=40)])
    email = EmailField(_l("Email"), [Optional(), Length(max=254)])
    language = SelectField(
        _l("Language"),
        choices=LANGUAGE_CHOICES[1:],  # a language, never "as my browser asks"
        validate_choice=False,  # checked by NewGameForm.player_languages, with a clear message
    )
    timezone = StringField(
        _l("Time zone"), [Optional(), Length(max=64)]
    )  # NewGameForm.player_zones
    bot = BooleanField(_l("Bot"))  # A13: the server's bot plays this seat (no email)


def _finite(form: Any, field: Any) -> None:
    """A number of hours, not NaN or infinity (``Decimal`` parses both; comparing NaN raises)."""
    if field.data is not None and not field.data.is_finite():
        raise StopValidation(_l("write a number of hours, such as 24 or 0.5"))


class SmallIntegerField(IntegerField):
    """A whole number of at most 9 digits: a longer one is refused as it is read (WTForms'
    ``NumberRange`` would otherwise turn a 400-digit number into a float and fail)."""

    def process_formdata(self, valuelist: list[Any]) -> None:
        if valuelist and len(str(valuelist[0]).strip().lstrip("+-")) > 9:
            self.data = None
            raise ValueError(self.gettext("Not a valid integer value."))
        super().process_formdata(valuelist)


def _positive(form: Any, field: Any) -> None:
    if field.data is not None and field.data <= 0:
        raise ValidationError(_l("must be more than 0 hours"))


def _hours(label: Any, seconds: int) -> DecimalField:
    return DecimalField(
        label,
        default=Decimal(seconds) / 3600,
        places=None,
        widget=NumberInput(step="any", min="0"),
        validators=[
            InputRequired(_l("how many hours?")),
            _finite,
            _positive,
            NumberRange(max=MAX_WINDOW_HOURS, message=_l("at most 720 hours (30 days)")),
        ],
    )


class NewGameForm(FlaskForm):
    """Create a game (A1 windows, V1-V9, R3.5, R7.1, the board R1.4)."""

    title = StringField(_l("Title"), [Optional(), Length(max=120)])
    creator_email = EmailField(
        _l("Your email (organiser)"),
        [
            InputRequired(
                _l("the organiser's email address is needed: the game starts once you confirm it")
            ),
            Length(max=254),
        ],
    )
    creator_timezone = StringField(_l("Your time zone"), [Optional(), Length(max=64)])
    players = FieldList(FormField(PlayerRow), min_entries=MAX_PLAYERS, max_entries=MAX_PLAYERS)
    turn_hours = _hours(_l("Turn window (hours)"), DEFAULT_WINDOWS["turn"])
    stop_hours = _hours(_l("Stop window (hours)"), DEFAULT_WINDOWS["stop"])
    last_call_hours = _hours(_l("Last call window (hours)"), DEFAULT_WINDOWS["last_call"])
    negotiation_hours = _hours(_l("Negotiation window (hours)"), DEFAULT_WINDOWS["negotiation"])
    variants = MultiCheckboxField(
        _l("Variants"),
        choices=[SelectChoice(v.id, _l(v.summary)) for v in VARIANT_TABLE],
        validate_choice=True,
    )
    must_roll_after_close = BooleanField(
        _l("After a closed deal the next player must roll before dealing")
    )
    open_money = BooleanField(_l("Open money: everyone sees every money total"))
    pace = RadioField(
        _l("Pace: the standing orders every player starts with (each player can change them)"),
        choices=[
            SelectChoice(
                "brisk",
                _l(
                    "Brisk: cards not aimed at you happen, last calls pass, your investors are"
                    " offered at the fair price, as boss you accept up to the fair price plus"
                    " 2 M and close when the deal is complete"
                ),
            ),
            SelectChoice(
                "standard",
                _l("Standard: cards not aimed at you happen and last calls pass"),
            ),
            SelectChoice("relaxed", _l("Relaxed: every question waits for you")),
        ],
        default=DEFAULT_PACE,
    )
    proxy_hours = SmallIntegerField(
        _l("Play for a player who has been away this many hours (0: never)"),
        default=48,
        validators=[Optional(), NumberRange(min=0, max=MAX_PROXY_HOURS)],
        render_kw={"inputmode": "numeric", "min": 0, "max": MAX_PROXY_HOURS},
    )
    quiet_hours = BooleanField(
        _l("Quiet hours: windows do not run out in the night of a player they wait for")
    )
    board_choice = RadioField(
        _l("Board"),
        choices=[
            SelectChoice("default", _l("The default board (a balanced reconstruction)")),
            SelectChoice("upload", _l("Upload a board file (JSON)")),
        ],
        default="default",
    )
    board_file = FileField(_l("Board file"))

    def default_languages(self, lang: str) -> None:
        """Every player row without a language gets ``lang`` (the organiser's page language);
        a posted form shown again keeps what was chosen."""
        for entry in self.players.entries:
            if not entry.form.language.data:
                entry.form.language.data = lang if lang in LANGUAGE_CODES else "en"

    def player_rows(self) -> list[tuple[str, str]]:
        """The filled player rows as ``[(name, email)]``; raises ``ValueError`` with a message
        for a half-filled row or a wrong number of players."""
        return [(name, email) for name, email, _lang in self._filled()]

    def player_bots(self) -> list[int]:
        """The seats (in ``player_rows``'s order) whose row chose a bot (A13)."""
        return [i for i, (_name, email, _lang) in enumerate(self._filled()) if not email]

    def player_languages(self) -> list[str]:
        """The language of each filled player row, in seat order (``player_rows``'s order)."""
        return [lang for _name, _email, lang in self._filled()]

    def player_zones(self) -> list[str]:
        """The time zone of each filled player row, in seat order (``""``: none given, the
        player's own default or UTC). Raises ``ValueError`` with a message for a zone this
        server does not know."""
        zones = []
        for entry in self.players.entries:
            if _row_used(entry.form):
                zones.append(_known_zone(entry.form.timezone.data))
        return zones

    def creator_zone(self) -> str:
        """The organiser's time zone (the times of their mail; ``""``: UTC). Raises
        ``ValueError`` with a message for a zone this server does not know."""
        return _known_zone(self.creator_timezone.data)

    def _filled(self) -> list[tuple[str, str, str]]:
        rows = []
        for entry in self.players.entries:
            name = (entry.form.name.data or "").strip()
            bot = bool(entry.form.bot.data)
            email = "" if bot else (entry.form.email.data or "").strip()
            if not _row_used(entry.form):
                continue
            if not name or not (email or bot):
                raise ValueError(
                    _l("every player needs a name, and an email address unless a bot plays it")
                )
            lang = entry.form.language.data or "en"
            if lang not in LANGUAGE_CODES:
                names = ", ".join(languages.names().values())
                raise ValueError(_l("each player's language is one of %(names)s", names=names))
            rows.append((name, email, lang))
        if not 2 <= len(rows) <= MAX_PLAYERS:
            raise ValueError(_l("a game takes 2 to 6 players (two play by the two-player rules)"))
        return rows

    def window_seconds(self) -> dict[str, int]:
        """The windows in seconds (A1), at least 1 second each."""
        fields = {
            "turn": self.turn_hours,
            "stop": self.stop_hours,
            "last_call": self.last_call_hours,
            "negotiation": self.negotiation_hours,
        }
        return {k: max(1, round(f.data * 3600)) for k, f in fields.items()}


NOTIFY_CHOICES = [
    SelectChoice("every", _l("Every move: an email for everything that concerns me")),
    SelectChoice("must_act", _l("Only when I must act (and invitations, and the game's end)")),
    SelectChoice("digest", _l("What needs an answer at once; other news in a daily digest")),
    SelectChoice("off", _l("No email (only this inbox)")),
]


def night_checked(ok: bool, start_field: Any, end_field: Any) -> bool:
    """A12: a night given whole (two different times ``HH:MM``, at most 12 hours apart) or not
    at all; ``ok`` is what the fields' own checks said. Adds the reason to ``end_field``'s
    errors and returns ``False`` otherwise."""
    start, end = (start_field.data or "").strip(), (end_field.data or "").strip()
    if bool(start) != bool(end) or (start and start == end):
        end_field.errors = [
            *end_field.errors,
            _l("Give both times of your night (two different times), or neither."),
        ]
        return False
    if ok and start and night_hours(start, end) > 12:
        end_field.errors = [*end_field.errors, _l("A night lasts at most 12 hours.")]
        return False
    return ok


def _known_zone(value: str | None) -> str:
    """``value`` stripped, when empty or a zone this server knows; else ``ValueError``."""
    name = (value or "").strip()
    if name and not valid_timezone(name):
        raise ValueError(_l("unknown time zone: use a name like Europe/Berlin or UTC"))
    return name


def check_timezone(form: Any, field: Any) -> None:
    """WTForms validator: ``field`` holds an IANA zone name. Raises ``ValidationError``."""
    if not valid_timezone((field.data or "").strip()):
        raise ValidationError(_l("unknown time zone: use a name like Europe/Berlin or UTC"))


class SettingsForm(FlaskForm):
    """A seat's settings: email preference, time zone, language, away (A6)."""

    away = BooleanField(
        _l("I am away: windows do not wait for me (I count as letting things happen and passing)")
    )
    notify = RadioField(_l("Email me"), choices=NOTIFY_CHOICES, default="every")
    timezone = StringField(_l("Time zone"), [InputRequired(), Length(max=64), check_timezone])
    language = SelectField(_l("Language"), choices=LANGUAGE_CHOICES)
