"""The argument parsers of the ``vlneval`` commands, one module per command module of
:mod:`vlneval.cli`: light (argparse and the shared argument helpers), so that building a
command's parser imports none of the library the command runs."""
