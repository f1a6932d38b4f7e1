"""The geometry of a publish report's chart, one small chart per channel, for `templates/staff/_chart.html`.

Each line is told apart by three things, never colour alone: its colour (each at least 7:1 against white, beyond
WCAG's 3:1 for graphics and 4.5:1 for text), its stroke (solid, dashed, dotted) and a label at its end with its name
and its number. The words are the template's; here are only coordinates, in a 420 × 260 view box: narrow enough
that on a 390-pixel phone, where it scales down, its 15-unit words still show at 12 pixels or more.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from notifier.delivery.report import ChannelReport

WIDTH, HEIGHT = 420, 260
# Room for the numbers (left), the line labels (right), and the start and end times on two rows (they would overlap
# on one in a plot this narrow: "22 h 10 min 24 s").
LEFT, RIGHT, TOP, BOTTOM = 64, 172, 14, 60
LABEL_GAP = 18  # the least vertical distance between two line labels
# (series, colour, dash pattern): blue 9.3:1, green 7.9:1, red 7.8:1 against white
STYLES = (("sent", "#1c4587", ""), ("delivered", "#1b5e20", "10 5"), ("failed", "#a11d1d", "3 4"))


@dataclass(frozen=True)
class Line:
    """One series: its name (sent, delivered, failed), look, SVG points, last value and where its label goes."""

    name: str
    colour: str
    dash: str
    points: str
    value: int
    label_y: float


@dataclass(frozen=True)
class Figure:
    """One channel's chart: the plot area, the lines, the top of the scale, and the gridlines' heights."""

    channel: str
    width: int
    height: int
    left: int
    right: int
    top: int
    bottom: int
    scale: int
    lines: tuple[Line, ...]
    grid: tuple[float, ...]
    start: datetime
    end: datetime


def figure(channel: ChannelReport, start: datetime, end: datetime) -> Figure:
    """The chart of one channel's cumulative counts from `start` to `end`, scaled to its recipients."""
    right, bottom = WIDTH - RIGHT, HEIGHT - BOTTOM
    scale = max(channel.recipients, 1)
    span = max((end - start).total_seconds(), 1.0)

    def x(at: datetime) -> float:
        return LEFT + (right - LEFT) * min(max((at - start).total_seconds() / span, 0.0), 1.0)

    def y(value: float) -> float:
        return bottom - (bottom - TOP) * value / scale

    lines = []
    for name, colour, dash in STYLES:
        if name == "delivered" and channel.delivered is None:
            continue  # email: nothing is known beyond the mail server's acceptance
        values = [getattr(point, name) for point in channel.points]
        points = " ".join(f"{x(p.at):.1f},{y(v):.1f}" for p, v in zip(channel.points, values, strict=True))
        lines.append(Line(name, colour, dash, points, values[-1], y(values[-1])))
    grid = tuple(y(scale * share / 4) for share in range(1, 5))
    return Figure(channel.channel, WIDTH, HEIGHT, LEFT, right, TOP, bottom, scale, _spread(lines, TOP, bottom),
                  grid, start, end)


def _spread(lines: list[Line], top: float, bottom: float) -> tuple[Line, ...]:
    """Move the end labels apart (at least LABEL_GAP) so equal lines still have readable labels, in line order."""
    order = sorted(range(len(lines)), key=lambda i: lines[i].label_y)
    heights = [min(max(lines[i].label_y, top + LABEL_GAP / 2), bottom) for i in order]
    for k in range(1, len(heights)):
        heights[k] = max(heights[k], heights[k - 1] + LABEL_GAP)
    overflow = heights[-1] - bottom if heights else 0
    if overflow > 0:
        heights = [h - overflow for h in heights]
    placed = dict(zip(order, heights, strict=True))
    return tuple(Line(line.name, line.colour, line.dash, line.points, line.value, round(placed[i], 1))
                 for i, line in enumerate(lines))
