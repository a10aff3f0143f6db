"""`icelab.bench.context`: what a run's env.json says of the harness's code."""

from __future__ import annotations

import pytest

from icelab.core import provenance

pytestmark = pytest.mark.spark


def test_env_records_the_git_state_the_run_began_with(ctx, monkeypatch):
    began = ctx.git
    assert set(began) == {"commit", "dirty"}
    # A file edited while the run works (a later commit, a dirty tree) is not the run's code.
    monkeypatch.setattr(provenance, "git_state", lambda *a, **k: {"commit": "0" * 40, "dirty": True})
    assert ctx.env()["git"] == began
