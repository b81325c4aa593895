"""The reply corpus: mail bodies as people write them, each with what it must be read as (a
verb with its price, space or text) or ``unclear``. Every word of every language is in it.
Pure: no app, no database (``imtheboss.web.replies.read``, ``imtheboss.web.replies.words``)."""

from __future__ import annotations

import pytest
from imtheboss.web.replies.read import first_line
from imtheboss.web.replies.words import WORDS, Reading, understand
from support.reply_mails import ORIGINAL, gmail_html, multipart_mail, outlook_html, quoted, raw_mail

R = Reading
UNCLEAR = "unclear"

IOS = (
    "\n\nSent from my iPhone\n\nOn 1 Dec 2026, at 15:00, I'm the Boss! <boss@example.org>"
    " wrote:\n\n"
)
ZH = "该你表态了：有人提出了条件，你接受还是拒绝？回复这封邮件即可。"
ZH_HANT = "輪到你表態了：有人提出了條件，你接受還是拒絕？回覆這封郵件即可。"
ZH_ATTRIBUTION = "在 2026年12月1日 15:00，I'm the Boss! 写道：\n"
ZH_HANT_ATTRIBUTION = "於 2026年12月1日 15:00，I'm the Boss! 寫道：\n"
CORPUS: list[tuple[str, bytes, Reading | str]] = [
    ("plain word", raw_mail("allow"), R("allow")),
    ("capitalised with a full stop", raw_mail("Allow."), R("allow")),
    ("shouted", raw_mail("STOP!\n"), R("stop")),
    (
        "top-posted over a quote",
        raw_mail("pass\n\nOn Tue, 1 Dec 2026 at 15:00, I'm the Boss! <b@x> wrote:\n" + quoted()),
        R("pass"),
    ),
    (
        "below the quote",
        raw_mail("On Tue, 1 Dec 2026, I'm the Boss! wrote:\n" + quoted() + "\n\naccept\n"),
        R("accept"),
    ),
    (
        "attribution wrapped over two lines",
        raw_mail(
            "On Tue, 1 Dec 2026 at 15:00, I'm the Boss! <play+x@boss.example.org>\nwrote:\n"
            + quoted()
            + "\n\nreject"
        ),
        R("reject"),
    ),
    ("iPhone", raw_mail("roll" + IOS + quoted()), R("roll")),
    ("iPhone footer only", raw_mail("\nSent from my iPhone\n\n" + quoted()), UNCLEAR),
    ("a signature", raw_mail("draw\n\n-- \nAmy Liu\nAcme Ltd"), R("draw")),
    ("only a signature", raw_mail("\n-- \nAmy Liu\nallow"), UNCLEAR),
    ("offer cash", raw_mail("offer 3\n\n" + quoted()), R("offer", price={"cash": 3})),
    ("offer cash with M", raw_mail("Offer 4M"), R("offer", price={"cash": 4})),
    ("offer one share", raw_mail("offer 1 share"), R("offer", price={"shares": 1})),
    ("offer two shares", raw_mail("offer 2 shares"), R("offer", price={"shares": 2})),
    ("offer without a number", raw_mail("offer"), UNCLEAR),
    ("offer half a million", raw_mail("offer 2.5"), UNCLEAR),
    ("a greeting first", raw_mail("Hi!\n\nallow"), R("allow")),
    ("a greeting with a name", raw_mail("Hi Bill,\nstop\n\n" + quoted()), R("stop")),
    ("a Chinese greeting", raw_mail("你好，\n允许", charset="gbk"), R("allow")),
    ("a greeting only", raw_mail("Hi,\n\n" + quoted()), UNCLEAR),
    ("two greetings", raw_mail("Hi,\nHello,\nallow"), UNCLEAR),
    ("a greeting, then a sentence", raw_mail("Hi,\nI think so"), UNCLEAR),
    ("同意", raw_mail("同意\n\n" + quoted(), charset="gbk"), R("yes")),
    ("好", raw_mail("好", charset="gb18030"), R("yes")),
    ("不要", raw_mail("不要\n\n" + quoted(), charset="gbk"), R("no")),
    ("Yes", raw_mail("Yes" + IOS + quoted()), R("yes")),
    ("Deal!", raw_mail("Deal!\n\n" + quoted()), R("deal")),
    ("Accept, thanks!", raw_mail("Accept, thanks!\n\n" + quoted()), R("accept")),
    ("接受，谢谢", raw_mail("接受，谢谢\n\n" + quoted(), charset="gbk"), R("accept")),
    ("拒絕，謝謝。", raw_mail("拒絕，謝謝。", charset="big5"), R("reject")),
    ("offer, thank you", raw_mail("offer 3, thank you"), R("offer", price={"cash": 3})),
    ("thanks alone", raw_mail("Thanks!\n\n" + quoted()), UNCLEAR),
    ("a word in a word is no thanks", raw_mail("passty"), UNCLEAR),
    ("yes and more", raw_mail("yes but only if Bill pays"), UNCLEAR),
    (
        "GBK with no charset label, the quote in Chinese",
        raw_mail("同意\n\n" + ZH_ATTRIBUTION + quoted(ZH), charset="gbk").replace(
            b"; charset=gbk", b""
        ),
        R("yes"),
    ),
    (
        "Big5 with no charset label, the quote in Chinese",
        raw_mail("拒絕\n\n" + ZH_HANT_ATTRIBUTION + quoted(ZH_HANT), charset="big5").replace(
            b"; charset=big5", b""
        ),
        R("reject"),
    ),
    ("a share as the mail shows it", raw_mail("出价 1 份红利"), R("offer", price={"shares": 1})),
    ("UTF-8 with no charset label", raw_mail("允许").replace(b"; charset=utf-8", b""), R("allow")),
    ("a sentence", raw_mail("I think I will allow it"), UNCLEAR),
    ("empty", raw_mail(""), UNCLEAR),
    ("only the quote", raw_mail(quoted()), UNCLEAR),
    (
        "chat",
        raw_mail("chat: see you at 8, Bill\n\n" + quoted()),
        R("chat", text="see you at 8, Bill"),
    ),
    ("chat with nothing", raw_mail("chat:   "), UNCLEAR),
    ("deal", raw_mail("deal"), R("deal")),
    ("close", raw_mail("close\n"), R("close")),
    ("fail", raw_mail("  fail  "), R("fail")),
    ("place", raw_mail("place 7"), R("place", space=7)),
    (
        "format=flowed chat",
        raw_mail("chat: a long line that the client \nwrapped softly \n\n> quoted", flowed=True),
        R("chat", text="a long line that the clientwrapped softly"),
    ),
    ("format=flowed word", raw_mail("accept\n\n" + quoted(), flowed=True), R("accept")),
    ("Gmail HTML only", raw_mail(gmail_html("allow"), subtype="html"), R("allow")),
    (
        "Gmail HTML, the answer in bold",
        raw_mail(gmail_html("<b>Stop</b>"), subtype="html"),
        R("stop"),
    ),
    ("Outlook HTML", raw_mail(outlook_html("pass"), subtype="html"), R("pass")),
    (
        "Apple Mail HTML",
        raw_mail(
            '<html><body><div>roll</div><div><br><blockquote type="cite"><div>allow</div>'
            "</blockquote></div></body></html>",
            subtype="html",
        ),
        R("roll"),
    ),
    ("HTML with nothing of its own", raw_mail(gmail_html(""), subtype="html"), UNCLEAR),
    (
        "multipart: the plain part is read",
        multipart_mail("accept\n\n" + quoted(), gmail_html("reject")),
        R("accept"),
    ),
    (
        "Simplified in GB2312",
        raw_mail(
            "允许\n\n在 2026年12月1日 15:00，I'm the Boss! 写道：\n" + quoted(), charset="gb2312"
        ),
        R("allow"),
    ),
    (
        "Simplified in GBK, a GBK-only character in the quote",
        raw_mail("阻止\n\n" + quoted("堃 " + ORIGINAL), charset="gbk"),
        R("stop"),
    ),
    (
        "GBK labelled GB2312",
        raw_mail("出价 3\n\n" + quoted("镕"), charset="gbk").replace(
            b"charset=gbk", b"charset=GB2312"
        ),
        R("offer", price={"cash": 3}),
    ),
    (
        "GB18030, full-width digits",
        raw_mail("出价 ２ 股", charset="gb18030"),
        R("offer", price={"shares": 2}),
    ),
    (
        "Simplified, phone footer",
        raw_mail("接受\n\n发自我的iPhone\n\n" + quoted(), charset="gbk", encoding="8bit"),
        R("accept"),
    ),
    ("Simplified footer only", raw_mail("发自我的iPhone\n\n允许", charset="gbk"), UNCLEAR),
    (
        "Simplified chat, full-width colon",
        raw_mail("聊天：明天见", charset="gb2312"),
        R("chat", text="明天见"),
    ),
    (
        "Traditional in Big5",
        raw_mail(
            "允許\n\n於 2026年12月1日 15:00，I'm the Boss! 寫道：\n" + quoted(), charset="big5"
        ),
        R("allow"),
    ),
    ("Traditional in Big5, 8bit", raw_mail("拒絕", charset="big5", encoding="8bit"), R("reject")),
    (
        "Traditional, phone footer first",
        raw_mail("從我的iPhone傳送\n擲骰", charset="big5"),
        UNCLEAR,
    ),
    (
        "Traditional offer of a share",
        raw_mail("出價 1 股", charset="big5"),
        R("offer", price={"shares": 1}),
    ),
    ("Chinese full stop", raw_mail("成交。", charset="gb18030"), R("close")),
    (
        "Outlook plain original",
        raw_mail("draw\n\n-----Original Message-----\nFrom: I'm the Boss!\nallow"),
        R("draw"),
    ),
    (
        "Outlook plain header block first",
        raw_mail("From: I'm the Boss!\nSent: Tuesday\n\nallow"),
        UNCLEAR,
    ),
    ("zero-width space and BOM", raw_mail("\ufeff\u200ballow\u200b"), R("allow")),
    ("two words on the line", raw_mail("allow stop"), UNCLEAR),
]

# Every word of every language, alone on its line (their prices, spaces and texts added).
EXTRA = {"offer": " 3", "place": " 4", "chat": ": hi"}
for verb, by_lang in WORDS.items():
    for lang, words in by_lang.items():
        for word in words:
            expected = R(
                verb,
                price={"cash": 3} if verb == "offer" else None,
                space=4 if verb == "place" else None,
                text="hi" if verb == "chat" else None,
            )
            charset = {"zh_Hans": "gbk", "zh_Hant": "big5"}.get(lang, "utf-8")
            CORPUS.append(
                (
                    f"{lang} {word}",
                    raw_mail(word + EXTRA.get(verb, "") + "\n\n" + quoted(), charset=charset),
                    expected,
                )
            )


@pytest.mark.parametrize(("raw", "expected"), [c[1:] for c in CORPUS], ids=[c[0] for c in CORPUS])
def test_reply_corpus(raw: bytes, expected: Reading | str) -> None:
    line = first_line(raw)
    reading = understand(line) if line is not None else None
    assert (reading or UNCLEAR) == expected


def test_the_corpus_is_large_and_covers_every_word() -> None:
    assert len(CORPUS) >= 40 + sum(len(ws) for v in WORDS.values() for ws in v.values())
    bodies = b"".join(c[1] for c in CORPUS)
    assert bodies  # every word is in it: built above from WORDS itself
    languages = {c[0].split()[0] for c in CORPUS}
    assert {"en", "zh_Hans", "zh_Hant"} <= languages
