"""How things are said to a reader, in their language and zone: ``display`` (times, prices, names),
``story`` (messages), ``timeline`` (events as history rows), ``threads`` and ``story_read`` (the
story's chapters), ``board_svg`` and ``money_chart`` (pictures), ``refusals``, ``command_forms``
and ``decisions`` (what a page asks), ``forms`` (Flask-WTF forms) and ``verify_report``.
"""
