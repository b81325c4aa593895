"""The mail worker's door into web/ (``imtheboss.worker.tasks``, ``signin_mail``, ``smtp``): web/
writes the mail, the worker only sends it. What the worker takes:

- the message a seat's rows make, in its reader's language (``compose``), and the sign-in mail
  (``compose_sign_in``, of a ``SignInLink`` row; ``has_seat``: whether its address gets one);
- ``MailFailure``: a mail that cannot be written or was not handed over;
- the reminders at 80% of a window (``plan_reminders``, ``claim_reminders``,
  ``write_reminders``: the sweep and the mail queue write their rows);
- what the kinds table says of a row (``kinds``: ``IN_WINDOW`` asks in a window, ``ESSENTIAL``
  goes whatever the seat chose, ``BATCHED_ANSWERS`` asks and waits in a batch) and whether its
  seat is looking at the game now (``present``: a question waits while it is).
"""

from __future__ import annotations

from imtheboss.web.games.presence import present
from imtheboss.web.mail.compose import compose
from imtheboss.web.mail.failure import MailFailure
from imtheboss.web.mail.kinds import BATCHED_ANSWERS, ESSENTIAL, IN_WINDOW
from imtheboss.web.mail.reminders import claim_reminders, plan_reminders, write_reminders
from imtheboss.web.mail.sign_in import compose_sign_in, has_seat
from imtheboss.web.players.people import SignInLink

__all__ = [
    "BATCHED_ANSWERS",
    "ESSENTIAL",
    "IN_WINDOW",
    "MailFailure",
    "SignInLink",
    "claim_reminders",
    "compose",
    "compose_sign_in",
    "has_seat",
    "plan_reminders",
    "present",
    "write_reminders",
]
