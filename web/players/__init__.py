"""The people behind the seats: ``people`` (players, known by their address), ``addresses``
(the player an address is, in any case), ``auth`` (who the request is), ``links`` (signed links
in mail), ``signin`` (signing in by email), ``me`` (my games) and ``player_settings`` (a
player's defaults and API token).
"""
