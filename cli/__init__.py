"""The ``socbot`` command line: one module per command, imported lazily (``cli.main``).
May import every floor below. A new command goes in its own module, registered in
``cli.main.COMMANDS``.

Importing this package turns Python's bytecode cache back on where
``PYTHONDONTWRITEBYTECODE`` is set (containers, CI): without it every start compiles
the ~1,500 modules a command imports again, 3-5 s before ``investigate`` does anything.
The first run writes the cache (into the virtualenv and the source tree); a read-only
file system is left as it is (Python ignores a cache it cannot write).
"""

import sys

sys.dont_write_bytecode = False
