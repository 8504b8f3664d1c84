"""The contract between Harbor and rho, without Harbor: the run command, its environment, the
install template's variables and the totals read back after a run.

Kept apart from ``rho_harbor_agent`` (which imports Harbor) so that it can be imported, tested
and reused where Harbor is not installed.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RUN_SCRIPT_SOURCE = HERE / "rho-harbor-run.sh"
INSTALL_TEMPLATE = HERE / "install-rho.sh.j2"
RUN_SCRIPT_PATH = "/installed-agent/rho-harbor-run.sh"
DEFAULT_PACKAGE_SPEC = "@rho/cli"
DEFAULT_NODE_VERSION = "22.23.5"

# Variables passed through to the run when set on the host (Harbor forwards them explicitly).
FORWARDED_ENV = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "RHO_FIRST_BYTE_TIMEOUT", "RHO_IDLE_TIMEOUT", "RHO_MAX_RETRIES")


def resolve_model(harbor_model: str | None, env: Mapping[str, str]) -> str | None:
    """The model rho is asked for: ``RHO_MODEL``, else Harbor's ``--model`` (an ``openai/``
    prefix dropped, since rho speaks OpenAI's API and takes the bare name; other prefixes are
    kept, as OpenAI-compatible routers such as OpenRouter name models that way), else
    ``OPENAI_MODEL``, else None (rho's default)."""
    explicit = (env.get("RHO_MODEL") or "").strip()
    if explicit:
        return explicit
    if harbor_model and harbor_model.strip():
        name = harbor_model.strip()
        return name[len("openai/"):] if name.startswith("openai/") else name
    fallback = (env.get("OPENAI_MODEL") or "").strip()
    return fallback or None


def build_run_env(
    model: str | None,
    env: Mapping[str, str],
    *,
    max_turns: int | None = None,
    max_cost_usd: float | None = None,
    reasoning_effort: str | None = None,
) -> dict[str, str]:
    """The environment of the run command."""
    run_env = {key: env[key] for key in FORWARDED_ENV if env.get(key)}
    if model:
        run_env["RHO_MODEL"] = model
    if max_turns is not None:
        run_env["RHO_MAX_TURNS"] = str(int(max_turns))
    if max_cost_usd is not None:
        run_env["RHO_MAX_COST"] = str(float(max_cost_usd))
    if reasoning_effort:
        run_env["RHO_REASONING_EFFORT"] = reasoning_effort
    return run_env


def build_run_command(instruction: str, script: str = RUN_SCRIPT_PATH) -> str:
    """The shell command Harbor runs in the task's working directory."""
    return f"bash {shlex.quote(script)} {shlex.quote(instruction)}"


def template_variables(package_spec: str | None = None, node_version: str | None = None) -> dict[str, str]:
    """Variables of ``install-rho.sh.j2``."""
    return {
        "package_spec": package_spec or DEFAULT_PACKAGE_SPEC,
        "node_version": node_version or DEFAULT_NODE_VERSION,
        "run_script": RUN_SCRIPT_SOURCE.read_text(encoding="utf-8").rstrip("\n"),
    }


def read_totals(logs_dir: Path) -> dict[str, Any] | None:
    """Token and cost totals of a run, from the ``run_end`` event in ``rho-events.jsonl``
    (falling back to the trajectory's ``final_metrics``), as Harbor's AgentContext fields:
    ``n_input_tokens`` (cached included, as OpenAI counts them), ``n_cache_tokens``,
    ``n_output_tokens``, ``cost_usd``, plus ``status`` and ``exit_code`` for metadata."""
    logs_dir = Path(logs_dir)
    totals: dict[str, Any] | None = None
    events = logs_dir / "rho-events.jsonl"
    if events.exists():
        for line in events.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue  # a torn last line
            if isinstance(event, dict) and event.get("type") == "run_end" and isinstance(event.get("usage"), dict):
                usage = event["usage"]
                totals = {
                    "n_input_tokens": int(usage.get("input_tokens", 0)),
                    "n_cache_tokens": int(usage.get("cached_tokens", 0)),
                    "n_output_tokens": int(usage.get("output_tokens", 0)),
                    "cost_usd": float(usage.get("cost_usd", 0.0)),
                    "status": event.get("status"),
                }
    if totals is None:
        trajectory = logs_dir / "trajectory.json"
        if trajectory.exists():
            try:
                metrics = json.loads(trajectory.read_text(encoding="utf-8")).get("final_metrics") or {}
            except (json.JSONDecodeError, AttributeError):
                metrics = {}
            if metrics:
                totals = {
                    "n_input_tokens": int(metrics.get("total_prompt_tokens", 0)),
                    "n_cache_tokens": int(metrics.get("total_cached_tokens", 0)),
                    "n_output_tokens": int(metrics.get("total_completion_tokens", 0)),
                    "cost_usd": float(metrics.get("total_cost_usd", 0.0)),
                    "status": None,
                }
    if totals is None:
        return None
    exit_code = logs_dir / "rho-exit-code"
    totals["exit_code"] = int(exit_code.read_text().strip()) if exit_code.exists() and exit_code.read_text().strip().lstrip("-").isdigit() else None
    return totals


if __name__ == "__main__":
    # For tests and debugging: `python3 rho_harbor_contract.py command INSTRUCTION [HARBOR_MODEL]`
    # prints {"command", "env"}; `... totals LOGS_DIR` prints the totals.
    import os
    import sys

    if len(sys.argv) >= 3 and sys.argv[1] == "command":
        model = resolve_model(sys.argv[3] if len(sys.argv) > 3 else None, os.environ)
        print(json.dumps({"command": build_run_command(sys.argv[2]), "env": build_run_env(model, os.environ)}))
    elif len(sys.argv) == 3 and sys.argv[1] == "totals":
        print(json.dumps(read_totals(Path(sys.argv[2]))))
    else:
        print("usage: rho_harbor_contract.py command INSTRUCTION [HARBOR_MODEL] | totals LOGS_DIR", file=sys.stderr)
        sys.exit(2)
