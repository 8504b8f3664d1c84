"""rho as a Harbor installed agent (Terminal-Bench and other Harbor datasets).

    harbor run -d terminal-bench@2.0 --agent-import-path rho_harbor_agent:RhoAgent \\
        --model openai/gpt-5-mini --agent-kwarg max_turns=200

(with this folder on PYTHONPATH). The class follows Harbor's ``BaseInstalledAgent`` in both of
its shapes: the one with ``_install_agent_template_path`` and ``create_run_agent_commands``
(Harbor renders the template, runs it as root, then runs the commands), and the later one with
``install(environment)`` and ``run(instruction, environment, context)``. The run command and
the files it leaves are in ``rho-harbor-run.sh``; the parts that need no Harbor are in
``rho_harbor_contract``.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from harbor.agents.installed.base import BaseInstalledAgent

try:  # the first shape of the API
    from harbor.agents.installed.base import ExecInput
except ImportError:  # pragma: no cover - the later shape has no ExecInput
    ExecInput = None  # type: ignore[assignment,misc]

from rho_harbor_contract import (
    INSTALL_TEMPLATE,
    build_run_command,
    build_run_env,
    read_totals,
    resolve_model,
    template_variables,
)

_HAS_RUN_COMMANDS = hasattr(BaseInstalledAgent, "create_run_agent_commands")


class RhoAgent(BaseInstalledAgent):
    """Installs rho with npm and runs ``rho --json --profile unrestricted`` on the instruction,
    in the task's working directory. Reads back an ATIF trajectory and the token and cost
    totals."""

    SUPPORTS_ATIF = True

    def __init__(
        self,
        logs_dir: Path,
        *args: Any,
        max_turns: int | str | None = None,
        max_cost_usd: float | str | None = None,
        reasoning_effort: str | None = None,
        package_spec: str | None = None,
        node_version: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(logs_dir, *args, **kwargs)
        # Harbor passes --agent-kwarg values as text.
        self._max_turns = int(max_turns) if max_turns not in (None, "") else None
        self._max_cost_usd = float(max_cost_usd) if max_cost_usd not in (None, "") else None
        self._reasoning_effort = reasoning_effort or None
        self._package_spec = package_spec
        self._node_version = node_version

    @staticmethod
    def name() -> str:
        return "rho"

    def get_version_command(self) -> str | None:
        return "rho --version"

    # -- the install script ------------------------------------------------------------------

    @property
    def _install_agent_template_path(self) -> Path:
        return INSTALL_TEMPLATE

    @property
    def _template_variables(self) -> dict[str, str]:
        base = getattr(super(), "_template_variables", {}) or {}
        return {**base, **template_variables(self._package_spec, self._node_version)}

    # -- the run command ---------------------------------------------------------------------

    def _run_env(self) -> dict[str, str]:
        model = resolve_model(getattr(self, "model_name", None), os.environ)
        return build_run_env(model, os.environ, max_turns=self._max_turns, max_cost_usd=self._max_cost_usd, reasoning_effort=self._reasoning_effort)

    def create_run_agent_commands(self, instruction: str) -> list[Any]:
        return [ExecInput(command=build_run_command(instruction), env=self._run_env())]

    # -- what Harbor reads back --------------------------------------------------------------

    def populate_context_post_run(self, context: Any) -> None:
        totals = read_totals(Path(self.logs_dir))
        if totals is None:
            return
        context.n_input_tokens = totals["n_input_tokens"]
        context.n_cache_tokens = totals["n_cache_tokens"]
        context.n_output_tokens = totals["n_output_tokens"]
        context.cost_usd = totals["cost_usd"]
        metadata = dict(getattr(context, "metadata", None) or {})
        metadata.update({"rho_status": totals["status"], "rho_exit_code": totals["exit_code"]})
        context.metadata = metadata

    # -- the later API shape: install() and run() are abstract there --------------------------

    if not _HAS_RUN_COMMANDS:

        async def install(self, environment: Any) -> None:
            import jinja2  # a Harbor dependency

            script = jinja2.Template(INSTALL_TEMPLATE.read_text(encoding="utf-8")).render(**self._template_variables)
            with tempfile.TemporaryDirectory() as folder:
                local = Path(folder) / "install-rho.sh"
                local.write_text(script, encoding="utf-8")
                await environment.upload_file(source_path=local, target_path="/installed-agent/install-rho.sh")
            await self.exec_as_root(environment, command="bash /installed-agent/install-rho.sh", env={"DEBIAN_FRONTEND": "noninteractive"})

        async def run(self, instruction: str, environment: Any, context: Any) -> None:
            instruction = self.render_instruction(instruction)
            await self.exec_as_agent(environment, command=build_run_command(instruction), env=self._run_env())
