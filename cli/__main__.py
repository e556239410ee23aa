"""``python -m mnemolog.cli``: the ``mnemolog`` command (the SessionEnd hook starts its background capture this way)."""

from mnemolog.cli.app import main

main()
