"""The logger class gunicorn command lines name since before web/ had folders:
``--logger-class imtheboss.web.logs.GunicornLogger`` in a deployment's unit or Procfile keeps
working after an upgrade. The logging itself is ``imtheboss.web.app.logs``."""

from imtheboss.web.app.logs import GunicornLogger

__all__ = ["GunicornLogger"]
