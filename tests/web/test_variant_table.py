"""The variants are one table, ``engine/options.py``'s ``VARIANT_TABLE``: the new-game form
lists its rows, each summary read in the player's language from the catalogs (extracted from
the engine's table by ``web/babel.cfg``)."""

from __future__ import annotations

from flask_babel import force_locale, lazy_gettext
from imtheboss.engine import languages
from imtheboss.engine.options import VARIANT_TABLE, VARIANTS


def test_every_variant_summary_is_translated_in_every_language(app) -> None:
    with app.test_request_context():
        for language in languages.LANGUAGES:
            if language.code == languages.DEFAULT:
                continue
            with force_locale(language.code):
                same = [v.id for v in VARIANT_TABLE if str(lazy_gettext(v.summary)) == v.summary]
            assert same == [], language.code


def test_the_new_game_form_lists_the_table_in_the_readers_language(app) -> None:
    client = app.test_client()
    page = client.get("/new", headers={"Accept-Language": "zh-CN"}).get_data(as_text=True)
    with app.test_request_context(), force_locale("zh_Hans"):
        shown = [str(lazy_gettext(v.summary)) for v in VARIANT_TABLE]
    assert [v.id for v in VARIANT_TABLE] == list(VARIANTS)
    assert all(text in page for text in shown)
