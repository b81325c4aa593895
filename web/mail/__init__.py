"""Mail the game writes: ``notify`` (the outbox: who hears about what, written with the events) and
``undelivered`` (mail that did not go out, as the organiser sees it).
"""
