"""Reading a reply as people write them: the first meaningful line of a mail's own words, above
(or, when the writer answers below the quote, after) the quoted text.

Pure: bytes in, a line out; no Flask, no database. Handles plain and HTML-only bodies,
``format=flowed`` (RFC 3676), quotes with ``>`` and attribution lines ("On … wrote:", "在 …
写道：", "於 … 寫道："), Outlook's "Original Message" and header blocks, signatures (``-- ``)
and mobile footers ("Sent from my iPhone", "发自我的iPhone"), one greeting line above the answer
("Hi,", "你好，"), in UTF-8, GB2312/GBK/GB18030 and Big5 (each label read as its widest
superset: what Chinese mail clients send under it; a body with no label that is not UTF-8 is
read in the charset ``charset-normalizer`` detects).
"""

from __future__ import annotations

import re
import unicodedata
from email import policy
from email.message import EmailMessage, Message
from email.parser import BytesParser
from html.parser import HTMLParser

from charset_normalizer import from_bytes
from imtheboss.web.replies.words import CHAT

# Charset labels read as the superset clients really send under them.
CHARSETS = {
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "x-gbk": "gb18030",
    "euc-cn": "gb18030",
    "cp936": "gb18030",
    "big5": "big5hkscs",
    "x-big5": "big5hkscs",
    "cp950": "big5hkscs",
}
# What a body without a charset label may be in: what mail clients send (detected).
DETECTED = ("utf_8", "gb18030", "big5hkscs", "cp1252")
MAX_LINE = 600  # characters kept of the line found
# One greeting line above the answer: "Hi,", "Hello Bill!", "Dear all,", "你好，", "您好！"
GREETING = re.compile(
    r"^(hi|hello|hey|dear|good (morning|afternoon|evening)|你好|您好|大家好|哈囉|哈啰|嗨)"
    r"([\s,，]+[^\s\d,，!！.。:：]{1,20}){0,2}\s*[,，!！.。:：~]?$",
    re.IGNORECASE,
)

ATTRIBUTION_END = re.compile(r"(wrote|a écrit|schrieb)\s*:$|(写道|寫道)\s*[:：]?$", re.IGNORECASE)
ATTRIBUTION_START = re.compile(r"^(on\s|在\s*\d|於\s*\d|在\s|於\s)", re.IGNORECASE)
STOPS = re.compile(
    r"^(-- ?|_{8,}|-{5,}.*|-+\s*(original message|原始邮件|原始郵件|转发邮件|轉寄郵件).*-*"
    r"|(from|发件人|寄件者|發件人)\s*[:：].*"
    r"|sent (from|with|via) .*|get outlook for .*|envoyé de mon .*|von meinem .* gesendet"
    r"|enviado desde mi .*|发自我的.*|從我的.*傳送|从我的.*发送|寄自我的.*|使用.*(傳送|发送)"
    r"|(发自|来自|來自).*(邮箱|郵箱|客户端|客戶端|手机|手機|iphone|ipad|android).*)$",
    re.IGNORECASE,
)


def first_line(raw: bytes) -> str | None:
    """The first meaningful line of the mail ``raw`` (its bytes as received), or ``None`` when
    it has none (empty, only quotes and signatures, or no text part)."""
    message = BytesParser(policy=policy.default).parsebytes(raw)
    text = body_text(message)
    return None if text is None else line_of(text)


def body_text(message: EmailMessage) -> str | None:
    """The text of ``message``'s own body: its plain part, else its HTML part as text (quoted
    blocks dropped); ``None`` when it has neither."""
    part = message.get_body(preferencelist=("plain", "html"))
    if part is None:
        return None
    text = decoded(part)
    if part.get_content_subtype() == "html":
        return html_text(text)
    if part.get_param("format", "").lower() == "flowed":
        return unflow(text, part.get_param("delsp", "").lower() == "yes")
    return text


def decoded(part: Message) -> str:
    """``part``'s payload as text, its charset read as ``CHARSETS`` says (bad bytes replaced);
    without a label, UTF-8 when it is, else the charset detected (one of ``DETECTED``)."""
    payload = part.get_payload(decode=True) or b""
    label = (part.get_content_charset() or _detected(payload)).lower()
    try:
        return payload.decode(CHARSETS.get(label, label), errors="replace")
    except LookupError:  # an unknown charset label
        return payload.decode("utf-8", errors="replace")


def _detected(payload: bytes) -> str:
    """The charset of a body that names none: ``utf-8`` when it decodes so, else the one
    ``charset-normalizer`` finds likeliest among ``DETECTED`` (``utf-8`` when none fits)."""
    try:
        payload.decode("utf-8")
        return "utf-8"
    except UnicodeDecodeError:
        best = from_bytes(payload, cp_isolation=list(DETECTED)).best()
        return best.encoding if best is not None else "utf-8"


def unflow(text: str, delsp: bool) -> str:
    """``format=flowed`` text (RFC 3676) with its soft line breaks joined (quote depth kept)."""
    out: list[str] = []
    carry = ""
    for line in text.splitlines():
        if line == "-- ":  # the signature separator is never flowed
            out += [carry] if carry else []
            out.append(line)
            carry = ""
            continue
        if line.startswith(" "):  # space-stuffing
            line = line[1:]
        if line.endswith(" "):
            carry += line[:-1] if delsp else line
            continue
        out.append(carry + line)
        carry = ""
    if carry:
        out.append(carry)
    return "\n".join(out)


def line_of(text: str) -> str | None:
    """The first meaningful line of ``text``: blank lines, quoted lines (``>``), attribution
    lines and one greeting line (``GREETING``) are passed over; a signature, a mobile footer or
    the start of a forwarded original ends the search. A chat (``chat: …``) takes the rest of
    its paragraph too, joined with spaces."""
    lines = [_clean(line) for line in text.splitlines()]
    greeted = False
    for index, line in enumerate(lines):
        if not line or line.startswith(">"):
            continue
        if not greeted and GREETING.match(line):
            greeted = True
            continue
        if STOPS.match(line) or line == "--":
            return None
        if _attribution(line, lines[index + 1 : index + 3]):
            continue
        if ATTRIBUTION_END.search(line):  # the tail of a wrapped attribution
            continue
        if CHAT.match(unicodedata.normalize("NFKC", line)):
            line = " ".join([line, *_paragraph(lines[index + 1 :])]).strip()
        return line[:MAX_LINE]
    return None


def _paragraph(lines: list[str]) -> list[str]:
    """The lines that go on a chat's first line, as a phone wraps or the writer breaks it: up
    to a blank line, a quote, an attribution, a signature or a footer."""
    out: list[str] = []
    for index, line in enumerate(lines):
        if not line or line.startswith(">") or STOPS.match(line) or line == "--":
            break
        if _attribution(line, lines[index + 1 : index + 3]) or ATTRIBUTION_END.search(line):
            break
        out.append(line)
    return out


def _clean(line: str) -> str:
    """A line without format characters (zero-width spaces, BOMs, bidi marks) and outer space;
    a signature separator keeps its one trailing space."""
    line = "".join(ch for ch in line if unicodedata.category(ch) != "Cf").replace("\xa0", " ")
    return "-- " if line == "-- " else line.strip()


def _attribution(line: str, after: list[str]) -> bool:
    """``line`` introduces a quote: it ends with "wrote:" (or 写道：), or starts like one ("On
    …", "在 …") and one of the next two lines ends so."""
    if ATTRIBUTION_END.search(line):
        return True
    return bool(ATTRIBUTION_START.match(line)) and any(ATTRIBUTION_END.search(a) for a in after)


class _Text(HTMLParser):
    """HTML to text lines: block elements break lines; quoted blocks (``blockquote``, Gmail's
    ``gmail_quote``, Outlook's reply header) and ``head``/``style``/``script`` are dropped."""

    BLOCKS = frozenset({"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "table", "hr"})
    SKIPPED = frozenset({"blockquote", "style", "script", "head", "title"})
    QUOTE_MARKS = (
        "gmail_quote",
        "divrplyfwdmsg",
        "appendonsend",
        "moz-cite-prefix",
        "yahoo_quoted",
    )

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.depth = 0  # inside a skipped element
        self.stack: list[bool] = []  # per open element: whether it started a skip

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        marks = " ".join((v or "") for k, v in attrs if k in ("class", "id")).lower()
        skip = tag in self.SKIPPED or any(m in marks for m in self.QUOTE_MARKS)
        if tag in self.BLOCKS:
            self.parts.append("\n" if tag != "hr" else "\n________\n")
        if tag in ("br", "hr", "img", "meta", "link", "input"):
            return
        self.stack.append(skip)
        self.depth += skip

    def handle_endtag(self, tag: str) -> None:
        if tag in ("br", "hr", "img", "meta", "link", "input") or not self.stack:
            return
        self.depth -= self.stack.pop()
        if tag in self.BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self.depth:
            self.parts.append(data.replace("\n", " "))


def html_text(html: str) -> str:
    """The text of an HTML body, one line per block, quoted blocks dropped."""
    parser = _Text()
    parser.feed(html)
    parser.close()
    return "".join(parser.parts)
