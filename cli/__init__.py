"""The ``socbot`` command line."""
