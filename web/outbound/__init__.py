"""Posts to other servers: ``outbox`` (the outbox of posts and its sender), ``hooks`` (a game's
webhooks), ``push`` (Web Push to a seat's phones) and ``ssrf`` (posting to addresses other
people chose, safely).
"""
