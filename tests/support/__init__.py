"""What the tests share, one module per thing they share, imported by an explicit path
(``from support.deal import find_setup``): ``tests/`` is on the path as the folder of the root
``conftest.py``. The app, databases and services of the tests (``app``, ``postgres``,
``redis_db``, ``dovecot``, ``hook_server``, ``tls_proxy``, ``wait``, ``logs``), games to play
(``deal``, ``play``, ``bots``, ``orders``, ``organiser``, ``home_games``, ``rules_game``,
``async_play``, ``reply_game``), ways in (``api_client``, ``page_forms``, ``sign_in``,
``reply_mails``, ``mail_preview``, ``migrations``), the worker's (``worker``), the end-to-end
stack (``stack``, ``e2e``) and the hidden-information scramble (``scramble``).
"""
