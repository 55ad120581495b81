"""Reading JSON Lines forgeflare wrote: whole objects kept, whatever else a line holds skipped."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from forgeflare.disk import json_objects


def test_objects_are_kept_and_the_rest_skipped() -> None:
    text = '{"a": 1}\n\n[1, 2]\n"s"\n{"b": \n{"c": "\\ud800"}\n{"d": 2}'
    assert json_objects(text) == [{"a": 1}, {"c": "\ufffd"}, {"d": 2}]


def test_bytes_that_are_not_utf8_skip_their_line() -> None:
    assert json_objects(b'{"a": 1}\n\xff\xfe\n{"b": 2}\n') == [{"a": 1}, {"b": 2}]


@given(st.lists(st.dictionaries(st.text(max_size=5), st.integers(), max_size=3), max_size=5))
def test_what_was_written_whole_reads_back(rows: list[dict[str, int]]) -> None:
    text = "".join(json.dumps(row) + "\n" for row in rows)
    assert json_objects(text) == rows
    assert json_objects(text + '{"torn": ') == rows  # a last write cut short
