"""The web pages a player or organiser reads, one module per page group: ``common`` (the
``pages`` blueprint, what every page has, who may see it), ``entry`` (home, new game), ``game``
(the game page, its fragment, acting), ``deals``, ``history``, ``story``, ``replay``, ``orders``,
``settings``, ``push``, ``admin``, ``organiser``, ``hooks`` and ``rules``. Every page shows a
seat only what ``imtheboss.engine.views`` gives that seat (A8); every action posts one command
through ``imtheboss.web.games.submit.submit``.

The package adds the ``pages`` blueprint (``common.bp``) with the routes of the modules that
put theirs on it (``register``); the other page modules register their own.
"""

from __future__ import annotations

from flask import Flask
from imtheboss.web.pages import admin, common, deals, entry, game, history, settings

ON_BP = (admin, deals, entry, game, history, settings)  # the modules whose routes go on ``bp``


def register(app: Flask) -> None:
    """Add the pages blueprint, with the routes of every room (``ON_BP``), to ``app`` (called
    by ``web.create_app``)."""
    app.register_blueprint(common.bp)
