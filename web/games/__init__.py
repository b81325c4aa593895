"""The game service, the only code that writes events, and a game's life around it.

The service: ``submit`` (the one way in: one command in one transaction), ``create``
(``create_game``, ``confirm_game``), ``load`` (the game row, its events, its state now or after
any event), ``deadlines`` (the deadline rows that follow the windows), ``commit_hooks`` (what
runs with and after a commit: the outbox writers, the worker's delivery), ``seats`` (a seat by
its link, the organiser's acts on seats), ``names`` (addresses, seat names, titles) and
``basics`` (``ServiceError``, the clock, secret tokens).

Around it: ``timeouts`` (several games' timeouts in one transaction), ``organiser`` (the
organiser's tools, A13), ``rematch``, ``presence`` (who is looking now), ``bots`` (bot seats in
play) and ``served`` (what the server did for a seat, A5, A6, A11).
"""
