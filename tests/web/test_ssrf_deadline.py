"""The SSRF guard's post has one deadline for the whole post (``imtheboss.web.outbound.ssrf.post``):
a receiver on loopback (a thread of the test) that answers with a header line every 0.2 s and
never ends its headers holds the post no longer than its ``timeout``; it raises
``Unreachable("timeout")`` while the receiver is still dripping."""

from __future__ import annotations

import threading

import pytest
from imtheboss.web.outbound import ssrf
from support.hook_server import Dripper, new_ca

DEADLINE = 1.0  # seconds for the whole post
BOUND = 30.0  # how long the test waits for the post to end, at most


@pytest.fixture
def dripper(tmp_path):
    ca, ca_file = new_ca(tmp_path)
    made = Dripper(ca)
    made.ca_file = ca_file
    yield made
    made.stop()


def test_a_receiver_dripping_headers_forever_is_cut_at_the_deadline(dripper) -> None:
    outcome: list[BaseException | ssrf.Reply] = []

    def post() -> None:
        try:
            outcome.append(
                ssrf.post(
                    dripper.url("/hook"),
                    b"{}",
                    {"Content-Type": "application/json"},
                    timeout=DEADLINE,
                    allow_loopback=True,
                    ca_file=str(dripper.ca_file),
                )
            )
        except BaseException as exc:  # noqa: BLE001 - handed to the test's thread
            outcome.append(exc)

    thread = threading.Thread(target=post, daemon=True)
    thread.start()
    thread.join(BOUND)
    assert not thread.is_alive(), "the post was still held by the dripping receiver"
    (failure,) = outcome
    assert isinstance(failure, ssrf.Unreachable) and failure.code == "timeout", failure
    assert dripper.lines >= 2  # it was answering, a line at a time, when the post gave up
