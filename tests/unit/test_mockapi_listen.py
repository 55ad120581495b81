"""Where a mock server listens (``mockapi/_listen.py``): the defaults a bare ``Listen`` gives and
the port file a test or a script waits for."""

from __future__ import annotations

from pathlib import Path

import pytest

from forgeflare.mockapi import Listen, MockAPIError
from forgeflare.mockapi._listen import write_port_file


def test_a_bare_listen_is_a_free_loopback_port_with_nothing_written() -> None:
    assert Listen() == Listen(host="127.0.0.1", port=0, port_file=None, record=None)


def test_the_port_file_holds_the_port_on_one_line_and_replaces_an_old_one(tmp_path: Path) -> None:
    port_file = tmp_path / "port"
    port_file.write_text("1\n")  # an earlier server's
    write_port_file(port_file, 43210)
    assert port_file.read_text() == "43210\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["port"]  # no temporary file left


def test_a_port_file_that_cannot_be_written_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "a file").write_text("")
    port_file = tmp_path / "a file" / "port"  # a file where its folder would be
    with pytest.raises(MockAPIError, match=r"cannot write port file .*a file/port: "):
        write_port_file(port_file, 43210)
