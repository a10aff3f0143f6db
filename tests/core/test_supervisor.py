"""Ports icelab's daemons bind: chosen where no outgoing connection can take them first."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from icelab.core import supervisor


def test_a_free_port_lies_below_the_ephemeral_range_and_binds() -> None:
    ephemeral = supervisor.ephemeral_ports()
    ports = {supervisor.free_port() for _ in range(20)}
    assert all(supervisor.LOWEST_PORT <= port < ephemeral.start for port in ports), (ports, ephemeral)
    for port in ports:
        with socket.socket() as sock:
            sock.bind((supervisor.HOST, port))


def test_a_listened_port_is_passed_over_for_the_kernels_choice(tmp_path: Path, monkeypatch) -> None:
    with socket.socket() as listener:
        listener.bind((supervisor.HOST, supervisor.free_port()))
        listener.listen()
        taken = listener.getsockname()[1]
        # The only port below the range is the one listened on.
        ranges = tmp_path / "ip_local_port_range"
        ranges.write_text(f"{taken + 1}\t60999\n")
        monkeypatch.setattr(supervisor, "EPHEMERAL", ranges)
        monkeypatch.setattr(supervisor, "LOWEST_PORT", taken)
        assert supervisor.ephemeral_ports() == range(taken + 1, 61000)
        assert supervisor.port_taken(taken)
        port = supervisor.free_port()
    assert port != taken


@pytest.mark.parametrize("text", ["", "garbage", "1 2 3"])
def test_an_unreadable_range_is_linuxs_default(tmp_path: Path, monkeypatch, text: str) -> None:
    ranges = tmp_path / "ip_local_port_range"
    ranges.write_text(text)
    monkeypatch.setattr(supervisor, "EPHEMERAL", ranges)
    assert supervisor.ephemeral_ports() == range(32768, 61000)
