"""``socbot demo``: the bundled sample alert through the real engine, with no key, no
network and no settings. Only the edges are stand-ins: a scripted model
(``cli.demo.model``, playing ``cli.demo.script``) and threat intel answered from recorded
data (``cli.demo.intel``). It may import any floor below ``cli``."""
