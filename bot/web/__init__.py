"""The investigation pages: list, investigation, alert, playbook, usage (server-rendered).

Handlers are aiohttp; templates are jinja2 with autoescape (``bot/web/templates``);
the one script is vendored here (``bot/web/static``). May import ``bot`` helpers and
every floor below; sign-in, sessions and access checks live here too. New pages: a
handler in ``pages.py`` (or a module beside it) and a template.
"""

__all__ = ["app", "auth", "pages", "view"]
