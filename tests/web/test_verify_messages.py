"""``imtheboss verify`` refuses a malformed file (exit 2) saying why in the reader's language
(``--lang``): every ``RecordError`` has a code with a sentence in English, 简体中文 and 繁體中文
(``imtheboss.web.say.verify_report``), and so do a file that is missing, not UTF-8, not JSON, and
a bad ``--hash``."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from imtheboss.engine.record import RecordError, game_record, read_record
from imtheboss.engine.simulate import simulate
from imtheboss.web.say import verify_report

CLI = str(Path(sys.executable).with_name("imtheboss"))
RECORD = game_record(simulate(3, 2).events)
BAD: list[Any] = [
    [],
    {"format": "something/1"},
    {k: v for k, v in RECORD.items() if k != "events"},
    {**RECORD, "players": "Amy"},
    {**RECORD, "seed": None},
    {**RECORD, "events": []},
    {**RECORD, "events": RECORD["events"][1:]},
    {**RECORD, "events": [RECORD["events"][0], RECORD["events"][2]]},
    {**RECORD, "events": [{"seq": 1, "at": 5, "event": RECORD["events"][0]["event"]}]},
    {**RECORD, "events": [{"seq": 1, "event": {"by": 0}}]},
    {**RECORD, "events": [{"seq": 1, "event": {**RECORD["events"][0]["event"], "by": "x"}}]},
    {**RECORD, "events": [{"seq": 1, "event": {"type": "turn_started"}}]},
    {**RECORD, "events": [{"seq": 1, "event": {"type": "game_started"}}]},
]


def _code(doc: Any) -> str:
    with pytest.raises(RecordError) as caught:
        read_record(doc)
    return caught.value.code


def test_every_malformed_record_names_its_problem() -> None:
    codes = [_code(doc) for doc in BAD]
    assert set(codes) == set(verify_report.RECORD_ERRORS), codes


def _run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CLI, *args], input=stdin, capture_output=True, text=True, timeout=120, check=False
    )


@pytest.mark.parametrize("lang", ["en", "zh_Hans", "zh_Hant"])
def test_the_refusals_in_each_language(tmp_path: Path, lang: str) -> None:
    files = []
    for i, doc in enumerate(BAD):
        path = tmp_path / f"bad{i}.json"
        path.write_text(json.dumps(doc))
        files.append(path)
    (tmp_path / "latin1.json").write_bytes(b'{"format": "caf\xe9"}')
    (tmp_path / "broken.json").write_text('{"format": "imtheboss-game/1", "events": [')
    files += [tmp_path / "latin1.json", tmp_path / "broken.json", tmp_path / "missing.json"]
    said = []
    for path in files:
        done = _run("verify", str(path), "--lang", lang)
        assert done.returncode == 2 and done.stdout == "", done.stderr
        said.append(done.stderr.strip())
    done = _run("verify", str(files[0]), "--hash", "xyz", "--lang", lang)
    assert done.returncode == 2
    said.append(done.stderr.strip())
    assert len(set(said)) == len(said)  # each problem its own sentence
    for line in said:
        assert line.startswith("imtheboss: ")
        assert not re.search(r"Error\b|Traceback|\\x", line), line  # no Python error text
        if lang != "en":
            bare = line.replace(str(tmp_path), "").replace("imtheboss: ", "")
            bare = re.sub(r"“[^”]*”|「[^」]*」", "", bare)  # the record's own keys, quoted
            names = r"imtheboss-game/1|something/1|--hash|JSON|UTF-8|ISO 8601|null|/\S+\.json"
            bare = re.sub(names, "", bare)  # the file's name and the format's words
            assert not re.search(r"[A-Za-z]{3,}", bare), line
