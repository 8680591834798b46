"""What every command of `hearth` shares: its exit codes and the one-line error.

The commands live beside the layers they wire (`services/status_command.py`,
`services/init_command.py`, `adapters/gardener_command.py`, `engine/wiring.py`,
`observe/*_command.py`); they sit no lower than services, so the error they raise sits
here, where each of them can import it, and `main.py` turns it into one line and a code.
"""

from __future__ import annotations

EXIT_OK, EXIT_RUNTIME, EXIT_USAGE, EXIT_BUDGET, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


class CliError(Exception):
    """A problem to report on one line, with the exit code to use."""

    def __init__(self, message: str, code: int = EXIT_RUNTIME) -> None:
        super().__init__(message)
        self.code = code
