"""``socbot eval``: the command, its engine side, what it prints, capture of a past run."""
