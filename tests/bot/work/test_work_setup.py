"""One replica's share of the investigations that run at once across all replicas."""

from __future__ import annotations

import pytest

from bot.work.setup import replica_limit
from config.settings import Settings


@pytest.mark.parametrize(
    ("every", "one", "expected"),
    [(6, None, 6), (6, 3, 3), (6, 9, 6), (1, 1, 1)],
)
def test_a_replica_runs_its_own_share_never_above_the_global_limit(
    every: int, one: int | None, expected: int
) -> None:
    settings = Settings.model_validate(
        {
            "slack": {"max_concurrent_investigations": every},
            "work": {"max_running_per_replica": one},
        }
    )
    assert replica_limit(settings) == expected


def test_a_share_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="max_running_per_replica"):
        Settings.model_validate({"work": {"max_running_per_replica": 0}})
