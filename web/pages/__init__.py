"""The web pages a player or organiser reads, one module per page group: ``common`` (the
``pages`` blueprint, what every page has, who may see it), ``entry`` (home, new game), ``game``
(the game page, its fragment, acting), ``deals``, ``history``, ``story``, ``replay``, ``orders``,
``settings``, ``push``, ``admin``, ``organiser``, ``hooks`` and ``rules``. Every page shows a
seat only what ``imtheboss.engine.views`` gives that seat (A8); every action posts one command
through ``imtheboss.web.service.submit``.
"""
