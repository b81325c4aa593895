"""The languages the server speaks: one row each, the one list of them.

Everything that offers, checks or speaks a language reads this table: the pages (the language
menu, ``?lang=``, the browser's Accept-Language), the forms and the API (a seat's language),
mail, push, webhooks, the reply words, the worker and the command line's ``--lang``. Adding a
language is a row here and its catalog (``web/translations/<code>/LC_MESSAGES/messages.po``);
docs/architecture.md, "How to add a language", has the drill.

The table lives in the engine so that the engine's command line may read it (the engine imports
nothing of web/ or worker/); it is plain data and imports nothing of the project.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Language:
    """One language.

    ``code``: what is stored (``seats.locale``, ``players.locale``, a webhook's locale, a mail
    row's ``locale``), the ``?lang=`` value, the catalog's folder and the Babel locale the pages,
    mail and dates are formatted in (``zh_Hans``). ``name``: the language's name in itself, as
    the menus show it. ``accept``: Accept-Language tags that mean it besides its code
    (``zh-TW``). ``brand``: the game's name in the From line of the mail (the catalog's
    translation of "I'm the Boss!"). ``replies``: verb -> the words a reply may say for it
    (the first is the one a mail shows; see ``imtheboss.web.replies.words``). ``share_words``
    and ``cash_words``: the units of an offer (``offer 1 share``, ``offer 3 m``). ``yes_words``
    and ``no_words``: how people say yes and no (``imtheboss.web.replies.words.PEOPLE``: a move
    only where one alone of theirs fits; never shown by a mail). ``colon``: the colon a mail
    writes after ``chat`` (with its space; full width in CJK). ``auto_replies``: the subjects
    webmail auto-replies in the language start with (``imtheboss.web.replies.screen``; a trailing
    ``:`` also matches the full-width ``：``). ``space_before`` and ``space_after``: the words
    around a space's number in ``place 5`` (``space 5``, ``第5格``); one that ends with a space
    needs a space (or more) after it.
    """

    code: str
    name: str
    accept: tuple[str, ...]
    brand: str
    replies: dict[str, tuple[str, ...]] = field(repr=False)
    share_words: tuple[str, ...]
    cash_words: tuple[str, ...]
    yes_words: tuple[str, ...] = ()
    no_words: tuple[str, ...] = ()
    colon: str = ": "
    auto_replies: tuple[str, ...] = ()
    space_before: tuple[str, ...] = ()
    space_after: tuple[str, ...] = ()


LANGUAGES: tuple[Language, ...] = (
    Language(
        code="en",
        name="English",
        accept=(),
        brand="I'm the Boss!",
        replies={
            "allow": ("allow",),
            "stop": ("stop",),
            "pass": ("pass",),
            "accept": ("accept",),
            "reject": ("reject",),
            "offer": ("offer",),
            "place": ("place",),
            "roll": ("roll",),
            "draw": ("draw",),
            "deal": ("deal",),
            "fail": ("fail",),
            "close": ("close",),
            "chat": ("chat",),
        },
        share_words=("share", "shares"),
        cash_words=("m", "million", "millions"),
        yes_words=("yes", "ok", "okay", "sure", "agreed", "agree", "yes please"),
        no_words=("no", "no thanks", "nope"),
        auto_replies=(
            "Automatic reply:",
            "Auto reply:",
            "Auto-reply:",
            "Autoreply:",
            "Auto response:",
            "Auto-response:",
            "Autoresponse:",
            "Auto:",
            "Out of Office",
            "Out of the office",
        ),
        space_before=("on space ", "space ", "on "),
    ),
    Language(
        code="zh_Hans",
        name="简体中文",
        accept=("zh-CN", "zh"),
        brand="我是大老板！",
        replies={
            "allow": ("允许", "放行"),
            "stop": ("阻止",),
            "pass": ("放弃", "过"),
            "accept": ("接受",),
            "reject": ("拒绝",),
            "offer": ("出价", "报价"),
            "place": ("放置",),
            "roll": ("掷骰", "掷"),
            "draw": ("抽牌",),
            "deal": ("交易", "开启交易"),
            "fail": ("失败",),
            "close": ("成交",),
            "chat": ("聊天",),
        },
        share_words=("份红利", "红利", "股"),
        cash_words=("百万", "万"),
        yes_words=("同意", "好", "好的", "行", "可以", "是", "没问题"),
        no_words=("不要", "不", "不同意", "不行", "不用"),
        colon="：",
        auto_replies=("自动回复:", "自动答复:", "自动应答:", "自动回覆:", "外出:", "不在办公室"),
        space_before=("第",),
        space_after=("号格", "格", "号"),
    ),
    Language(
        code="zh_Hant",
        name="繁體中文",
        accept=("zh-TW", "zh-HK"),
        brand="我是大老闆！",
        replies={
            "allow": ("允許", "放行"),
            "stop": ("阻止",),
            "pass": ("放棄", "過"),
            "accept": ("接受",),
            "reject": ("拒絕",),
            "offer": ("出價", "報價"),
            "place": ("放置",),
            "roll": ("擲骰", "擲"),
            "draw": ("抽牌",),
            "deal": ("交易", "開啟交易"),
            "fail": ("失敗",),
            "close": ("成交",),
            "chat": ("聊天",),
        },
        share_words=("份紅利", "紅利", "股"),
        cash_words=("百萬", "萬"),
        yes_words=("同意", "好", "好的", "行", "可以", "是", "沒問題"),
        no_words=("不要", "不", "不同意", "不行", "不用"),
        colon="：",
        auto_replies=("自動回覆:", "自動回復:", "自動答覆:", "自動回應:", "不在辦公室"),
        space_before=("第",),
        space_after=("號格", "格", "號"),
    ),
    Language(
        code="ja",
        name="日本語",
        accept=("ja-JP",),
        brand="アイム・ザ・ボス！",
        replies={
            "allow": ("許可",),
            "stop": ("ストップ",),
            "pass": ("パス",),
            "accept": ("承諾",),
            "reject": ("拒否",),
            "offer": ("提示",),
            "place": ("置く",),
            "roll": ("振る", "サイコロ"),
            "draw": ("引く",),
            "deal": ("取引",),
            "fail": ("不成立",),
            "close": ("成立",),
            "chat": ("チャット",),
        },
        share_words=("株",),
        cash_words=("百万",),
        yes_words=("はい", "了解", "オーケー", "いいよ"),
        no_words=("いいえ", "結構です", "やめます"),
        colon="：",
        auto_replies=("自動応答:", "自動返信:", "不在通知:"),
        space_before=("マス",),
        space_after=("番目", "番", "マス目"),
    ),
)
"""The languages, English first (the default: what is shown when nothing was chosen)."""

DEFAULT = "en"
"""The code of the language of a reader who chose none."""

CODES: tuple[str, ...] = tuple(row.code for row in LANGUAGES)
"""Every language's code, in the table's order."""

_BY_CODE = {row.code: row for row in LANGUAGES}


def language(code: object) -> Language:
    """The row of ``code``; the default language's row for anything else (``None``, ``""``, an
    unknown or non-string code): what a mail or a post falls back to."""
    return _BY_CODE.get(code, _BY_CODE[DEFAULT]) if isinstance(code, str) else _BY_CODE[DEFAULT]


def known(code: object) -> str:
    """``code`` when it is one of ``CODES``, else the default (``"en"``)."""
    return language(code).code


def names() -> dict[str, str]:
    """``{code: name in its own language}`` in the table's order (the menus)."""
    return {row.code: row.name for row in LANGUAGES}


def accept_tags() -> dict[str, str]:
    """``{tag: code}`` of every tag a browser's Accept-Language may name for a language: each
    code, then each row's ``accept`` aliases, in the table's order."""
    tags = {row.code: row.code for row in LANGUAGES}
    tags.update({alias: row.code for row in LANGUAGES for alias in row.accept})
    return tags
