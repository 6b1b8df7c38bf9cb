"""The ``org`` eval pack: one seeded, invented organisation with two weeks of background
logs (shared Parquet), genuine OTRF recordings mapped into it, and paired scenarios."""
