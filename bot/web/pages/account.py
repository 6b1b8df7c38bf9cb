"""The sign-in page (the button to Sign in with Slack) and signing out."""

from __future__ import annotations

from aiohttp import web

from bot.web.auth.session import SESSION_COOKIE
from bot.web.auth.signin import redirect, safe_next
from bot.web.pages.site import Web


class AccountPages:
    def __init__(self, pages: Web) -> None:
        self.pages = pages

    def add_routes(self, app: web.Application) -> None:
        app.router.add_get("/web/signin", self.signin)
        app.router.add_post("/web/signout", self.signout)

    async def signin(self, request: web.Request) -> web.Response:
        return self.pages.render(request, "signin.html", next=safe_next(request.query.get("next")))

    async def signout(self, _request: web.Request) -> web.Response:
        response = redirect("/web/signin")
        response.del_cookie(SESSION_COOKIE, path="/")
        return response
