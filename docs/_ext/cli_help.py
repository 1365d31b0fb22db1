"""``.. jitree-cli-help:: [COMMAND]``: the ``--help`` text of the jitree command line (or of
one of its commands), taken from :func:`jitree.cli.build_parser` when the site is built, so
that the page cannot drift from the program."""

import os

from docutils import nodes
from sphinx.util.docutils import SphinxDirective


def help_text(command=None):
    """The help of ``jitree`` (``command`` None) or of ``jitree COMMAND``, 80 columns wide."""
    from jitree.cli import build_parser

    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "80"  # argparse wraps to the terminal's width: fix it
    try:
        parser = build_parser()
        if command is None:
            return parser.format_help()
        for action in parser._subparsers._group_actions:
            if command in action.choices:
                return action.choices[command].format_help()
        raise ValueError(f"jitree has no command {command!r}")
    finally:
        if previous is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = previous


class CliHelp(SphinxDirective):
    optional_arguments = 1

    def run(self):
        text = help_text(self.arguments[0] if self.arguments else None).rstrip()
        block = nodes.literal_block(text, text)
        block["language"] = "text"
        return [block]


def setup(app):
    app.add_directive("jitree-cli-help", CliHelp)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
