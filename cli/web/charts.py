"""A small line chart of items and sessions over time, drawn server-side as SVG coordinates."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime

WIDTH, HEIGHT, PAD = 560, 160, 28


@dataclass(frozen=True)
class Series:
    """One line: its name, CSS class, SVG points and the count it ends at."""

    name: str
    css: str
    points: str
    total: int


@dataclass(frozen=True)
class Chart:
    """What the template draws: the lines, the first and last day, the highest count."""

    series: tuple[Series, ...]
    first: str
    last: str
    top: int
    width: int = WIDTH
    height: int = HEIGHT
    pad: int = PAD


def _day(moment: datetime | None) -> date | None:
    return moment.date() if moment is not None else None


def growth_chart(lines: Mapping[str, Iterable[datetime | None]]) -> Chart | None:
    """Cumulative counts per day of each named series of times (None when there is nothing to draw)."""
    days_of = {name: sorted(d for d in map(_day, times) if d is not None) for name, times in lines.items()}
    every = sorted({d for days in days_of.values() for d in days})
    if not every:
        return None
    if len(every) == 1:
        every = [every[0], every[0]]
    span = max((every[-1] - every[0]).days, 1)
    top = max(1, *(len(days) for days in days_of.values()))

    def x(day: date) -> float:
        return PAD + (WIDTH - 2 * PAD) * (day - every[0]).days / span

    def y(count: int) -> float:
        return HEIGHT - PAD - (HEIGHT - 2 * PAD) * count / top

    series = []
    for n, (name, days) in enumerate(days_of.items()):
        points = [(x(every[0]), y(0))]
        count = 0
        for day in sorted(set(days)):
            points.append((x(day), y(count)))
            count += days.count(day)
            points.append((x(day), y(count)))
        points.append((x(every[-1]), y(count)))
        series.append(Series(name, f"line{n}", " ".join(f"{a:.1f},{b:.1f}" for a, b in points), count))
    return Chart(tuple(series), every[0].isoformat(), every[-1].isoformat(), top)
