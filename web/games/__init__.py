"""A game's life around the service: ``timeouts`` (several games' timeouts in one transaction),
``organiser`` (the organiser's tools, A13), ``rematch``, ``presence`` (who is looking now),
``bots`` (bot seats in play) and ``served`` (what the server did for a seat, A5, A6, A11).
"""
