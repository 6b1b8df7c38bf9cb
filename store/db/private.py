"""Files socbot creates for itself: readable by their owner only.

The database holds raw alert payloads, investigation records and analysts'
messages; the chat history holds what was typed. A new file is made ``0600`` in a
folder made ``0700`` when socbot creates that folder; an existing file or folder
keeps the mode its owner gave it.
"""

from __future__ import annotations

import os
from pathlib import Path


def private_file(path: Path) -> None:
    """Create ``path`` empty, and its missing folders, unless something is there already."""
    if path.exists():
        return
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))
