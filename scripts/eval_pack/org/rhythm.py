"""Daily and weekly rhythm of a working population, and other small row helpers."""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from scripts.eval_pack.org.people import DAYS, START

CITIES = {
    "United States": ["New York", "Chicago", "Houston"],
    "Japan": ["Tokyo", "Osaka"],
    "Singapore": ["Singapore"],
    "Brazil": ["Sao Paulo"],
    "United Arab Emirates": ["Dubai"],
    "Poland": ["Gdansk", "Warsaw"],
    "Spain": ["Valencia"],
    "South Africa": ["Durban"],
    "Germany": ["Hamburg"],
    "United Kingdom": ["London"],
    "Netherlands": ["Rotterdam"],
}


def days() -> list[datetime]:
    return [START + timedelta(days=d) for d in range(DAYS)]


def weekday(day: datetime) -> bool:
    return day.weekday() < 5


def work_time(rng: random.Random, day: datetime, start: float = 7.0, end: float = 17.5) -> datetime:
    """A moment in the working day (busier mid-morning and mid-afternoon)."""
    hour = min(max(rng.triangular(start, end, rng.choice([9.5, 14.0])), 0), 23.99)
    return day + timedelta(hours=hour, seconds=rng.randint(0, 59))


def active(rng: random.Random, day: datetime, weekend_share: float = 0.06) -> bool:
    """Whether a person works that day (holidays and sick days on weekdays too)."""
    return rng.random() < (0.93 if weekday(day) else weekend_share)


def any_time(rng: random.Random, day: datetime) -> datetime:
    return day + timedelta(seconds=rng.randint(0, 86399))


def guid(rng: random.Random) -> str:
    h = f"{rng.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
