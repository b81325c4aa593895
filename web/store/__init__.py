"""The database beyond the models: ``rows`` (a submit's rows in as few statements as the database
allows), ``many`` (several games' rows together), ``negotiations`` (each negotiation's range of
events), ``records`` (a finished game's record), ``retry`` (a dead pooled connection costs no
request) and ``outage`` (what the server answers when the database is down).
"""
