"""Command-line guard rails: bad choices and overrides become one line, before Hydra runs."""

from __future__ import annotations

import difflib
import re
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn

from icelab.core.errors import UserError

CONF_DIR = Path(__file__).resolve().parents[2] / "conf"
GROUPS = ("experiment", "dataset", "engine", "profile", "setup", "storage")
GRAMMAR = "use key=value, key=[a,b], +new.key=value or ~key; quote values with special characters"
# Hydra options after which there is nothing to compose (or Hydra composes something else).
NO_COMPOSE = {"-h", "--help", "--hydra-help", "--version", "-sc", "--shell-completion", "--info", "-i"}
NO_COMPOSE |= {"--experimental-rerun", "-cp", "--config-path", "-cn", "--config-name", "-cd", "--config-dir"}


def choices(group: str) -> list[str]:
    """Selectable options of a config group (files starting with '_' are shared parts)."""
    return sorted(p.stem for p in (CONF_DIR / group).glob("*.yaml") if not p.stem.startswith("_"))


def check_choices(argv: Sequence[str]) -> None:
    """Reject `group=value` overrides naming an option that does not exist.

    Handles multirun lists (`dataset=small,medium`) and list selections
    (`profile=[as_ingested,rewrite_8mb]`); sweeps such as glob(...) are left to Hydra.
    """
    for arg in argv:
        match = re.fullmatch(r"[+~]*(\w+)=(.*)", arg)
        if not match or match.group(1) not in GROUPS:
            continue
        group, value = match.groups()
        if "(" in value:
            continue
        known = choices(group)
        for option in filter(None, (v.strip(" []") for v in value.split(","))):
            if option not in known:
                raise UserError(f"unknown {group} '{option}' (choose from: {', '.join(known)})")


def _argparse_error(message: str) -> NoReturn:
    raise UserError(f"{message} (see python run.py --help)")


def check_overrides(argv: Sequence[str]) -> None:
    """Parse and compose the config as Hydra will, so its multi-line errors become one line.

    A multirun composes every job of the sweep, as Hydra's own sweeper does before launching.
    The sections every experiment reads (dataset, engine, paths, protocol, storage) are validated too.
    """
    if any(arg.split("=")[0] in NO_COMPOSE for arg in argv):
        return
    # Hydra's private helpers, pinned with hydra-core==1.3.2: its own argv parser and sweep split.
    from hydra import initialize_config_dir
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
    from hydra._internal.utils import get_args_parser
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException, OverrideParseException

    parser = get_args_parser()
    parser.error = _argparse_error  # type: ignore[method-assign]
    args = parser.parse_args(argv)
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        overrides = OverridesParser.create(config_loader=GlobalHydra.instance().config_loader())
        parsed = []
        for arg in args.overrides:
            try:
                parsed += overrides.parse_overrides([arg])
            except OverrideParseException as exc:
                reason = _parse_reason(arg, str(exc))
                raise UserError(f"malformed override '{arg}': {reason} ({GRAMMAR})") from None
        try:
            jobs = BasicSweeper.split_arguments(parsed, None)[0] if args.multirun else [args.overrides]
        except HydraException as exc:
            raise UserError(f"cannot sweep: {_compact(str(exc))}") from None
        for job in jobs:
            _compose_and_validate(list(job))


def _parse_reason(arg: str, message: str) -> str:
    """The informative part of an OverrideParseException (its lines are grammar noise otherwise)."""
    lines = [line for line in message.splitlines() if line.strip() and not line.startswith("See https")]
    prefix = "LexerNoViableAltException: "
    if lines[0].startswith(prefix) and len(lines) > 1:  # the next line is a caret under the character
        pos = lines[1].index("^") - len(prefix)
        return f"unexpected character {arg[pos]!r} at position {pos + 1}"
    return lines[-1]


def _compact(message: str) -> str:
    """Hydra's multi-line message as one line, without its search-path and stack-trace hints."""
    kept = []
    for line in message.splitlines():
        if line.startswith(("Config search path", "Set the environment variable HYDRA_FULL_ERROR")):
            break
        if line.strip():
            kept.append(line.strip())
    return "; ".join(kept)


def _compose_and_validate(job: list[str]) -> None:
    """Compose one job's config as Hydra will and validate the sections every experiment reads."""
    from hydra import compose
    from hydra.errors import HydraException
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    from icelab.core import config

    try:
        cfg = compose(config_name="config", overrides=job)
        OmegaConf.to_container(cfg, resolve=True)  # interpolation errors surface here, not in Spark
    except (HydraException, OmegaConfBaseException, ValueError) as exc:
        raise UserError(_composition_error(exc, job)) from None
    sections = (config.dataset_config, config.engine_config, config.paths_config, config.protocol_config)
    for section in (*sections, config.storage_config):
        section(cfg)


def _composition_error(exc: Exception, job: list[str]) -> str:
    """One line for an error Hydra or OmegaConf raised while composing the overrides `job`."""
    from hydra.errors import ConfigCompositionException, MissingConfigException
    from omegaconf.errors import ConfigAttributeError, ConfigKeyError, OmegaConfBaseException

    cause = exc.__cause__
    if isinstance(exc, MissingConfigException):
        options = f" (choose from: {', '.join(exc.options)})" if exc.options else ""
        missing = _compact(str(exc)).split("; Available options")[0]
        return f"{missing}{options}"
    if isinstance(exc, OmegaConfBaseException):
        return f"invalid config: {exc.full_key}: {str(exc).splitlines()[0]}"
    if isinstance(exc, ConfigCompositionException) and isinstance(cause, OmegaConfBaseException):
        if isinstance(cause, (ConfigAttributeError, ConfigKeyError)) and cause.full_key:
            return _unknown_key(cause.full_key, job)
        if cause.full_key:  # a typed setting (Hydra's own) refused the value
            arg = _override_for(cause.full_key, job)
            return f"bad value in override '{arg}': {str(cause).splitlines()[0]}"
    return f"bad override: {_compact(str(exc))}"


def _override_for(full_key: str, job: list[str]) -> str:
    """The override that set `full_key`: the key itself, a key below it, or a dict holding it."""
    for arg in job:
        key = arg.lstrip("+~").split("=")[0]
        if key == full_key or key.startswith(f"{full_key}.") or full_key.startswith(f"{key}."):
            return arg
    return full_key


def _unknown_key(full_key: str, job: list[str]) -> str:
    """One line for an override of a key the config does not have: the keys it does have."""
    from hydra import compose
    from omegaconf import DictConfig, OmegaConf

    arg = _override_for(full_key, job)
    parent, _, key = full_key.rpartition(".")
    try:
        composed = compose(
            config_name="config", overrides=[a for a in job if a != arg], return_hydra_config=True
        )
        node = OmegaConf.select(composed, parent)
    except Exception:  # noqa: BLE001 (another bad override: the message just lists no keys)
        node = None
    if not isinstance(node, DictConfig):
        return f"unknown key '{full_key}' in override '{arg}'"
    known = sorted(str(k) for k in node if parent or k != "hydra")
    close = difflib.get_close_matches(key, known, n=1)
    hint = f"did you mean '{close[0]}'? " if close else ""
    where = parent or "the config"
    return f"unknown key '{full_key}' in override '{arg}' ({hint}{where} has: {', '.join(known)})"


def fail(message: str) -> None:
    """Print one line on stderr and exit with status 2."""
    print(f"icelab: error: {message}", file=sys.stderr)
    sys.exit(2)


@contextmanager
def one_line_errors() -> Iterator[None]:
    """Turn a UserError raised inside the block into one line and exit status 2."""
    try:
        yield
    except UserError as exc:
        fail(str(exc))
