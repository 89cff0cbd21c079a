"""A live session's compile messages go to a log file, never over the inspector's screen."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

NOISY = textwrap.dedent("""
    import ctypes, logging, os, sys
    from pathlib import Path
    log = logging.getLogger("inductor-ish")
    log.addHandler(logging.StreamHandler(sys.stderr))  # bound at import, as torch's handlers are
    from kinspect.commands.stderr_log import stderr_to_log
    with stderr_to_log(Path(sys.argv[1])) as terminal:
        log.warning("AUTOTUNE mm(1000x1024, 1024x4096)")
        os.write(2, b"from a C extension\\n")
        ctypes.CDLL(None).write(2, b"ERROR: External init callback\\n", 30)
        print("a stray print", file=sys.stderr)
        terminal.write("the screen\\n")
        terminal.flush()
    print("after the inspector", file=sys.stderr)
""")


def test_everything_written_to_stderr_goes_to_the_log_and_the_screen_stays_clean(tmp_path):
    log = tmp_path / "model.kinspect.log"
    done = subprocess.run([sys.executable, "-c", NOISY, str(log)], capture_output=True, text=True,
                          cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stderr == "the screen\nafter the inspector\n"
    assert log.read_text().splitlines() == [
        "AUTOTUNE mm(1000x1024, 1024x4096)", "from a C extension", "ERROR: External init callback", "a stray print"]


@pytest.mark.skipif(sys.platform == "win32", reason="Textual's Linux driver")
def test_the_inspector_draws_through_the_terminal_it_was_given(tmp_path):
    from textual.app import App
    from textual.drivers.linux_driver import LinuxDriver

    from kinspect.tui.terminal_driver import driver_drawing_to

    async def drivers(terminal):  # a driver is made inside the app's event loop
        app = App()
        return LinuxDriver(app)._file, driver_drawing_to(terminal)(app)._file

    with open(tmp_path / "terminal", "w") as terminal:
        textual_own, ours = asyncio.run(drivers(terminal))
    assert textual_own is sys.__stderr__  # the attribute kinspect replaces is what Textual draws on
    assert ours is terminal
