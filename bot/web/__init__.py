"""The investigation pages (server-rendered): ``guard`` checks every ``/web/`` request (signed
in, CSRF) and adds the pages' routes; wings ``pages`` (one module per page, and ``site``:
what every handler shares), ``view`` (what a page draws from stored records), ``auth``
(sessions, CSRF, Sign in with Slack, who may see what).

Templates are jinja2 with autoescape (``bot/web/templates``); the one script is vendored
(``bot/web/static``). May import the floors below ``bot``. A new page: a module in
``pages/`` and a template."""

__all__ = ["auth", "guard", "pages", "view"]
