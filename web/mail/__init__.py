"""Mail the game writes: ``kinds`` (every kind of mail, one table), ``notify`` (the outbox: who
hears about what, written with the events), ``reminders`` (the reminders at 80% of a window),
``compose`` (the message a row makes, in its reader's language: parts, headers, reply words),
``thread`` (which thread a mail belongs to), ``reply_answer`` (the answer to a reply by mail),
``sign_in`` (the sign-in mail), ``failure`` (``MailFailure``: a mail that cannot go out),
``outgoing`` (the mail worker's door into web/), ``preview`` (``imtheboss mail preview``) and
``undelivered`` (mail that did not go out, as the organiser sees it). The worker only sends.
"""
