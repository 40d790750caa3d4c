"""``python -m tableref``: the ``tableref`` command from a checkout, without the installed script."""
import sys

from .cli import main

sys.exit(main())
