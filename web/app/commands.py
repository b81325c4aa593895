"""What the ``imtheboss`` command (``imtheboss.worker.cli``) takes of web/, loaded only by the
commands that need it (``scenario`` and ``simulate --json`` start without Flask): the words of
a simulation's log and of the verify report in a language (``speaking``, ``simulation_log``,
``verdict_lines`` and the error texts), the doctor's list of what is stuck (``doctor``) and the
mail preview (``preview``).
"""

from __future__ import annotations

from imtheboss.web.app.doctor import run as doctor
from imtheboss.web.mail.preview import preview
from imtheboss.web.say.messages import simulation_log, speaking
from imtheboss.web.say.verify_report import (
    bad_hash_text,
    record_error_text,
    unreadable_text,
    verdict_lines,
)

__all__ = [
    "bad_hash_text",
    "doctor",
    "preview",
    "record_error_text",
    "simulation_log",
    "speaking",
    "unreadable_text",
    "verdict_lines",
]
