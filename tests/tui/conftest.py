"""Run the inspector's async tests (no asyncio plugin needed) and share its fixtures."""

from __future__ import annotations

import asyncio
import inspect
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the shared stand-in kernel

from tui_helpers import session_with_finding  # noqa: E402

from kinspect.core.source import RecordedSource
from kinspect.tui.app import InspectorApp


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    if not inspect.iscoroutinefunction(pyfuncitem.obj):
        return None
    args = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    asyncio.run(pyfuncitem.obj(**args))
    return True


@pytest.fixture
def recorded_app() -> InspectorApp:
    return InspectorApp(RecordedSource(session_with_finding(), "/recordings/model.session.json"))
