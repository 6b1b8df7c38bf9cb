"""Personal data pseudonymised for the model (``[privacy]``), restored for everyone else.

Applied at the one seam every model call crosses (``agent.model.gateway.LLMGateway``):
the request is pseudonymised just before the backend call (``seam.outgoing``), the
answer restored just after it (``seam.incoming``), so the engine, the tools and people
see real values, and every provider behind the backend sees pseudonyms only.
``tokens`` hands out and reads back the pseudonyms, ``detect`` finds personal values,
``mapper`` applies one conversation's map to text, ``sealed`` encrypts it for the store.
"""

from __future__ import annotations

from agent.model.privacy.mapper import Pseudonymiser
from agent.model.privacy.seam import incoming, outgoing
from agent.model.privacy.tokens import PseudonymMap, footer
from config.settings import Settings

__all__ = ["PseudonymMap", "Pseudonymiser", "footer", "incoming", "outgoing", "pseudonymiser_for"]


def pseudonymiser_for(settings: Settings, pmap: PseudonymMap | None = None) -> Pseudonymiser:
    """A pseudonymiser with the deployment's marked columns and internal domains."""
    marked = [column for table in settings.logs.tables for column in table.personal]
    return Pseudonymiser(
        settings.privacy,
        pmap,
        marked=marked,
        internal_suffixes=tuple(settings.intel.internal_domain_suffixes),
    )
