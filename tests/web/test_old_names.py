"""Names deployments wrote before web/ had folders keep working: a unit or Procfile that passes
``--logger-class imtheboss.web.logs.GunicornLogger`` loads the logger, and the app it starts is
the same app (the old module's name on the ``imtheboss.web`` package must not stand in for the
logging the app sets up)."""

from __future__ import annotations

import importlib
from datetime import UTC, datetime

from gunicorn.glogging import Logger
from imtheboss.web.app.logs import GunicornLogger
from support.app import make_app


def test_the_gunicorn_logger_s_old_name_loads_it_and_the_app_still_starts() -> None:
    old = importlib.import_module("imtheboss.web.logs")
    assert old.GunicornLogger is GunicornLogger and issubclass(GunicornLogger, Logger)
    app = make_app("sqlite://", lambda: datetime(2026, 12, 4, tzinfo=UTC))
    assert app.test_client().get("/healthz").status_code == 200
