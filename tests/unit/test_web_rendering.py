"""The page's small renderers: the word diff of an edit and the growth chart's coordinates."""

from __future__ import annotations

from datetime import UTC, datetime

from mnemolog.cli.web.charts import HEIGHT, PAD, WIDTH, growth_chart
from mnemolog.cli.web.diffs import Piece, word_diff


def test_a_word_diff_marks_what_left_and_what_came() -> None:
    pieces = word_diff("Run make test before pushing.", "Run make lint and make test before pushing.")
    assert "".join(p.text for p in pieces if p.change != "deleted") == "Run make lint and make test before pushing."
    assert "".join(p.text for p in pieces if p.change != "inserted") == "Run make test before pushing."
    assert [p.text.split() for p in pieces if p.change == "inserted"] == [["make", "lint", "and"]]
    assert word_diff(None, "new") == [Piece("inserted", "new")]
    assert word_diff("old", "") == [Piece("deleted", "old")]


def test_the_growth_chart_counts_each_series_per_day_within_the_frame() -> None:
    day = lambda d: datetime(2026, 11, d, 9, tzinfo=UTC)  # noqa: E731
    chart = growth_chart({"items": [day(1), day(1), day(3)], "sessions": [day(2), None]})
    assert chart is not None
    assert (chart.first, chart.last, chart.top) == ("2026-11-01", "2026-11-03", 3)
    assert [(s.name, s.total) for s in chart.series] == [("items", 3), ("sessions", 1)]
    for series in chart.series:
        for point in series.points.split():
            x, y = map(float, point.split(","))
            assert PAD <= x <= WIDTH - PAD and PAD <= y <= HEIGHT - PAD
    assert growth_chart({"items": [], "sessions": [None]}) is None
