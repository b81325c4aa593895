"""Reply mails as real clients write them, as raw bytes: plain or HTML-only, quoted below or
above, ``format=flowed``, GBK and Big5 bodies, signatures and mobile footers (the corpus test,
the receiver tests and the end-to-end game use them)."""

from __future__ import annotations

import base64
from datetime import UTC, datetime
from email.header import Header
from email.utils import format_datetime, make_msgid

ORIGINAL = (
    "Hello Amy,\n\n- Bill played a travel card on Cashman.\n\nYour answer is due by Tue 1 Dec"
    " 16:00 UTC.\n\nYou can also answer by replying to this mail: write one of these on the"
    " first line.\n  allow\n  stop\n  chat: …\n--\nFriday on I'm the Boss!"
)


def quoted(text: str = ORIGINAL) -> str:
    """``text`` quoted with ``>`` as plain-text clients do."""
    return "\n".join("> " + line if line else ">" for line in text.splitlines())


def raw_mail(
    body: str,
    *,
    to: str = "play+token@boss.example.org",
    sender: str = "amy@example.org",
    charset: str = "utf-8",
    subtype: str = "plain",
    flowed: bool = False,
    encoding: str = "base64",
    headers: dict[str, str] | None = None,
    message_id: str | None = None,
    in_reply_to: str | None = None,
    subject: str = "Re: [I'm the Boss!] Friday: a card waits for your answer",
) -> bytes:
    """One single-part mail to ``to`` from ``sender``, its body encoded in ``charset`` (a codec
    name; the label written is ``charset`` too) with ``encoding`` (``base64``, ``8bit``);
    ``subject`` is encoded as RFC 2047 says when it is not ASCII."""
    params = "; format=flowed; delsp=yes" if flowed else ""
    lines = [
        f"From: {sender}",
        f"To: {to}",
        f"Subject: {_header(subject)}",
        f"Date: {format_datetime(datetime(2026, 12, 1, 15, 0, tzinfo=UTC))}",
        f"Message-ID: {message_id or make_msgid(domain='client.example.org')}",
        "MIME-Version: 1.0",
        f"Content-Type: text/{subtype}; charset={charset}{params}",
        f"Content-Transfer-Encoding: {encoding}",
    ]
    if in_reply_to:
        lines += [f"In-Reply-To: {in_reply_to}", f"References: {in_reply_to}"]
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    data = body.replace("\n", "\r\n").encode(charset)
    payload = base64.encodebytes(data).replace(b"\n", b"\r\n") if encoding == "base64" else data
    return "\r\n".join(lines).encode() + b"\r\n\r\n" + payload


def _header(text: str) -> str:
    """``text`` as a header value: as it is when ASCII, else RFC 2047 encoded words."""
    return text if text.isascii() else Header(text, "utf-8").encode(linesep="\r\n")


def multipart_mail(plain: str, html: str, **kw) -> bytes:
    """A multipart/alternative reply (plain and HTML, UTF-8), as most clients send."""
    head = raw_mail("", **kw).split(b"\r\n\r\n")[0].decode()
    head = "\r\n".join(
        line
        for line in head.split("\r\n")
        if not line.startswith(("Content-Type", "Content-Transfer-Encoding"))
    )
    boundary = "==b0und4ry=="
    parts = []
    for subtype, text in (("plain", plain), ("html", html)):
        data = base64.encodebytes(text.replace("\n", "\r\n").encode()).decode()
        data = data.replace("\n", "\r\n")  # CRLF lines, as SMTP carries them
        parts.append(
            f"--{boundary}\r\nContent-Type: text/{subtype}; charset=utf-8\r\n"
            f"Content-Transfer-Encoding: base64\r\n\r\n{data}"
        )
    body = "\r\n".join(parts) + f"\r\n--{boundary}--\r\n"
    head += f'\r\nContent-Type: multipart/alternative; boundary="{boundary}"'
    return (head + "\r\n\r\n" + body).encode()


def gmail_html(answer: str, original: str = ORIGINAL) -> str:
    """An HTML-only body as Gmail writes it: the answer in a div, the original in a
    ``gmail_quote`` blockquote."""
    escaped = original.replace("&", "&amp;").replace("<", "&lt;").replace("\n", "<br>")
    return (
        f'<div dir="ltr">{answer}</div><br><div class="gmail_quote"><div dir="ltr"'
        ' class="gmail_attr">On Tue, 1 Dec 2026 at 15:00, I&#39;m the Boss! &lt;boss@example.org'
        f'&gt; wrote:<br></div><blockquote class="gmail_quote">{escaped}</blockquote></div>'
    )


def outlook_html(answer: str) -> str:
    """An HTML body as Outlook writes it: the answer, a rule, the original's header block."""
    return (
        "<html><head><style>p{margin:0}</style></head><body><div><p>"
        f'{answer}</p></div><hr style="display:inline-block;width:98%"><div id="divRplyFwdMsg">'
        "<b>From:</b> I'm the Boss!<br><b>Sent:</b> Tuesday</div><div>allow stop</div>"
        "</body></html>"
    )


def _bare_head(**kw) -> str:
    """``raw_mail``'s header block without its ``Content-*`` headers."""
    head = raw_mail("", **kw).split(b"\r\n\r\n")[0].decode()
    return "\r\n".join(x for x in head.split("\r\n") if not x.startswith("Content-"))


def many_parts_mail(count: int, first: str = "place 3", **kw) -> bytes:
    """A multipart/mixed mail of ``first`` and ``count`` empty text parts (``raw_mail``'s
    keywords for its headers): a mail whose cost lies in its shape, not its size."""
    head = _bare_head(**kw) + '\r\nContent-Type: multipart/mixed; boundary="b"\r\n\r\n'
    part = b"--b\r\nContent-Type: text/plain\r\n\r\n\r\n"
    first_part = f"--b\r\nContent-Type: text/plain\r\n\r\n{first}\r\n".encode()
    return head.encode() + first_part + part * count + b"--b--\r\n"


def nested_mail(depth: int, text: str = "place 3", **kw) -> bytes:
    """A mail of ``depth`` multipart/mixed parts each inside the one before, ``text`` in the
    innermost (``raw_mail``'s keywords for its headers)."""
    body = "".join(
        f'Content-Type: multipart/mixed; boundary="b{n}"\r\n\r\n--b{n}\r\n' for n in range(depth)
    )
    return (
        _bare_head(**kw) + "\r\n" + body + f"Content-Type: text/plain\r\n\r\n{text}\r\n"
    ).encode()
