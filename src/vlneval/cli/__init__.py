"""The ``vlneval`` command: parses arguments, calls the library, prints. No logic here."""
