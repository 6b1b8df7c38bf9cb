"""What every page handler shares: the ``Web`` (database, settings, access, signer,
sign-in, templates, Slack names), the viewer's request key, the security headers of every
answer (``app.guard`` sets them; a stream sets them itself) and the templates' filters
(``clip``; times: ``when``, ``stamp``, ``ago``, ``span``; labels: ``words``; Slack ids as
names: ``user``, ``channel``). A page that shows Slack ids answers with ``show`` (its
names looked up before it is sent, ``bot.web.pages.names``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import jinja2
from aiohttp import web

from bot.web.auth.access import Access
from bot.web.auth.session import SESSION_COOKIE, Signer, Viewer
from bot.web.auth.signin import SignIn
from bot.web.pages.names import Names
from bot.web.view.listing import address_label, words
from bot.web.view.when import ago, span, stamp, when
from config.settings import Settings
from store.db.engine import Database

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "Referrer-Policy": "same-origin",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
    "Cross-Origin-Opener-Policy": "same-origin",
}
HERE = Path(__file__).parents[1]  # bot/web: templates/ and static/
TEXT_CHARS = 4000  # one field of alert or model text on a page
VIEWER = web.RequestKey("viewer", Viewer)
LOCAL = Viewer(user="local", team=None, name="local", admin=True, sid="local", local=True)


@dataclass
class Web:
    """What every page handler needs."""

    db: Database
    settings: Settings
    access: Access
    signer: Signer
    signin: SignIn | None  # None: the local single user of ``socbot web``
    templates: jinja2.Environment
    names: Names

    def viewer(self, request: web.Request) -> Viewer | None:
        if self.signin is None:
            return LOCAL
        data = self.signer.read(request.cookies.get(SESSION_COOKIE))
        if data is None or data.get("t") != self.signin.team:
            return None
        user = str(data.get("u"))
        return Viewer(
            user=user,
            team=str(data.get("t")),
            name=str(data.get("n") or user),
            admin=user in self.access.admins,
            sid=str(data.get("sid")),
        )

    def html(self, request: web.Request, name: str, **values: object) -> str:
        viewer = request.get(VIEWER)
        return self.templates.get_template(name).render(
            viewer=viewer,
            csrf=self.signer.csrf_token(viewer.sid) if isinstance(viewer, Viewer) else "",
            signin=self.signin is not None,
            approvers=self.settings.learning.approvers,
            **values,
        )

    def render(
        self, request: web.Request, name: str, status: int = 200, **values: object
    ) -> web.Response:
        """The page with the Slack names already known (any it lacks: looked up for the
        next view)."""
        html = self.html(request, name, **values)
        return web.Response(text=html, status=status, content_type="text/html")

    async def show(
        self, request: web.Request, name: str, status: int = 200, **values: object
    ) -> web.Response:
        """The page with its Slack names (``Names.draw``: no wait when all are known)."""
        html = await self.names.draw(lambda: self.html(request, name, **values))
        return web.Response(text=html, status=status, content_type="text/html")


def templates(names: Names | None = None) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["clip"] = clip
    env.filters["when"] = when
    env.filters["stamp"] = stamp
    env.filters["ago"] = ago
    env.filters["words"] = words
    env.filters["span"] = span
    env.globals["address_label"] = address_label
    names = names or Names(None)
    env.filters["user"] = names.user
    env.filters["channel"] = names.channel
    return env


def clip(value: object, size: int = TEXT_CHARS) -> str:
    """Text cut to ``size`` characters, saying how many more there were."""
    text = "" if value is None else str(value)
    if len(text) <= size:
        return text
    return f"{text[:size]}… ({len(text) - size:,} more characters not shown)"
