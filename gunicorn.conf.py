"""gunicorn's settings for imtheboss, read from the working directory (gunicorn looks for
``./gunicorn.conf.py`` on its own). Command-line options override them.

Logging only: gunicorn's error and access logs pass the same redaction and carry the same
request ids as the app's (``imtheboss.web.app.logs``). Elsewhere (an installed wheel started from
another folder), pass ``--logger-class imtheboss.web.app.logs.GunicornLogger --access-logfile -``,
as the Procfile's ``web`` line does.
"""

logger_class = "imtheboss.web.app.logs.GunicornLogger"
accesslog = "-"  # the access log on stdout, one line a request with its request id
