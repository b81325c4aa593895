"""The JSON API (docs/api.md): ``seat`` (a seat's API: state, events, commands, the token; the
``api`` blueprint) and ``organiser`` (the organiser's acts on the same blueprint).
"""
