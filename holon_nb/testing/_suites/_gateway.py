"""Kernels on a Jupyter Kernel Gateway or Enterprise Gateway (``--holon-nb-gateway URL``; issue 30).

The run's kernel manager is jupyter_server's own gateway client
(:class:`jupyter_server.gateway.managers.GatewayKernelManager`: kernels started, interrupted, restarted and
shut down over the gateway's REST API, messages over its websocket), configured through the
:class:`~jupyter_server.gateway.gateway_client.GatewayClient` singleton with the URL and token. nbclient drives
it as it drives a local kernel, so outputs, receipts and widget state come back through the notebook as usual.

What differs from a local run, and why:

- **Environment.** A gateway passes a kernel only the request's ``KERNEL_*`` variables (plus what its own
  configuration allows), so the harness sends its settings as ``KERNEL_HOLON_NB_*`` (:func:`gateway_env`) and
  :data:`BOOT`, run silently first in the kernel, copies them to ``HOLON_NB_*``.
- **Holon home.** It lives with the kernel: :data:`BOOT` makes ``<kernel's temp dir>/holon-nb-gateway-<run>``
  on the kernel's machine (the same folder again after a ``holon-restart-kernel`` restart) and :data:`CLEAN`
  removes it after the final wait, before the kernel is shut down.
- **Working directory.** ``KERNEL_WORKING_DIR`` (what jupyter_server sends for the ``cwd``; Enterprise Gateway
  starts kernels there) is also applied by :data:`BOOT` when that folder exists on the kernel's machine (a
  shared file system, or a gateway on this machine); otherwise the kernel stays where the gateway started
  it, and a notebook that reads files beside it cannot find them.
- **Auth.** jupyter_server's gateway kernel client opens its websocket without the token (its REST calls send
  it); :class:`_Client` adds the same ``Authorization`` header to the websocket, as a token-protected gateway
  requires.

:func:`where` says where the kernel ran (the plugin reports it per notebook).
"""

from __future__ import annotations

import logging
import os
import uuid
from typing import Any

__all__ = ["BOOT", "CLEAN", "boot", "gateway_env", "gateway_kernel_manager", "where"]


#: Silent first request in a gateway kernel: settings from ``KERNEL_HOLON_NB_*``, the holon home, the working
#: directory; leaves ``_holon_nb_where`` (host, pid, home, cwd) for :func:`where`.
BOOT = """
def _holon_nb_boot():
    import os, socket, tempfile
    env = os.environ
    for key in [k for k in env if k.startswith("KERNEL_HOLON_NB_")]:
        env[key[len("KERNEL_"):]] = env[key]
    home = os.path.join(tempfile.gettempdir(), "holon-nb-gateway-" + env.get("HOLON_NB_RUN", "run"))
    os.makedirs(home, exist_ok=True)
    env["HOLON_NB_HOME"] = home
    cwd = env.get("KERNEL_WORKING_DIR")
    if cwd and os.path.isdir(cwd):
        os.chdir(cwd)
    return {"host": socket.gethostname(), "pid": os.getpid(), "home": home, "cwd": os.getcwd()}
_holon_nb_where = _holon_nb_boot()
del _holon_nb_boot
"""
#: Silent last request: remove the kernel's holon home (after the runtime closed its store).
CLEAN = """
import shutil as _holon_nb_shutil, os as _holon_nb_os
_holon_nb_shutil.rmtree(_holon_nb_os.environ.get("HOLON_NB_HOME", "/nonexistent-holon-nb-home"), ignore_errors=True)
del _holon_nb_shutil, _holon_nb_os
"""


def gateway_env(env: dict[str, str]) -> dict[str, str]:
    """The kernel-start environment for a gateway: ``env``'s ``HOLON_NB_*`` settings as ``KERNEL_HOLON_NB_*``
    (the home excepted: the kernel makes its own), plus ``KERNEL_HOLON_NB_RUN``, this run's id."""
    out = {f"KERNEL_{k}": v for k, v in env.items() if k.startswith("HOLON_NB_") and k != "HOLON_NB_HOME"}
    out["KERNEL_HOLON_NB_RUN"] = uuid.uuid4().hex[:16]
    return out


async def boot(run: Any) -> None:
    """Note where the run's kernel runs in its summary (``ran_on``); on a gateway, first run :data:`BOOT`
    silently in the kernel and take the holon home it made there (removed by :data:`CLEAN`).

    ``run`` is the harness's run (:class:`holon_nb.testing._harness._Run`): its ``client``, ``summary``,
    ``timeout``, ``gateway`` (URL or None) and ``silent(code, expr, limit)``.
    """
    km = run.client.km
    if not run.gateway:
        pid = getattr(getattr(getattr(km, "provisioner", None), "process", None), "pid", None)
        run.summary.ran_on = f"local kernel (pid {pid})" if pid else "local kernel"
        return
    booted = await run.silent(BOOT, "_holon_nb_where", run.timeout)
    run.summary.ran_on = where(run.gateway, km, booted)
    if isinstance(booted, dict) and booted.get("home"):
        run.summary.holon_home, run.summary.holon_home_removed = str(booted["home"]), True


def where(url: str, km: Any, booted: Any) -> str:
    """One line saying where the kernel ran: the gateway, the kernel id, and the host and pid it reported."""
    host = booted.get("host", "?") if isinstance(booted, dict) else "?"
    pid = booted.get("pid", "?") if isinstance(booted, dict) else "?"
    return f"gateway {url} kernel {getattr(km, 'kernel_id', '?')} on {host} (pid {pid})"


def gateway_kernel_manager(url: str, token: str | None, kernel_name: str | None) -> Any:
    """An unstarted kernel manager whose kernel the gateway at ``url`` runs (``kernel_name``: a kernelspec the
    gateway knows; None: its ``python3``).

    Raises:
        ImportError: jupyter_server is not installed (``pip install 'holon_nb[gateway]'``).
    """
    from jupyter_server.gateway.gateway_client import GatewayClient
    from jupyter_server.gateway.managers import GatewayKernelClient, GatewayKernelManager

    token = token if token is not None else os.environ.get("JUPYTER_GATEWAY_AUTH_TOKEN", "")
    client = GatewayClient.instance()
    if client.url != url or client.auth_token != token:
        GatewayClient.clear_instance()
        client = GatewayClient.instance(url=url, auth_token=token)
    manager = _manager_class(GatewayKernelManager, GatewayKernelClient, client)
    return manager(kernel_name=kernel_name or "python3", log=_LOG)


_CLASSES: dict[int, Any] = {}
# jupyter_server's gateway manager logs each start (with its arguments) at info; the run's summary says what
# matters, so its records go nowhere unless the application configures logging
_LOG = logging.getLogger("holon_nb.testing.gateway")
_LOG.addHandler(logging.NullHandler())


def _manager_class(manager: Any, kernel_client: Any, gateway: Any) -> Any:
    """Subclasses of jupyter_server's gateway kernel manager and client (made once): the manager starts the
    kernelspec it was given (jupyter_server's reads the name from the start call's arguments, which nbclient
    leaves out) and makes :class:`_Client` clients; the client sends the token on the websocket too."""
    if _CLASSES:
        return _CLASSES[0]

    class _Client(kernel_client):
        async def start_channels(
            self, shell: bool = True, iopub: bool = True, stdin: bool = True, hb: bool = True, control: bool = True
        ) -> None:
            """jupyter_server's ``GatewayKernelClient.start_channels`` with the auth headers on the websocket."""
            import threading

            import websocket
            from jupyter_client.asynchronous.client import AsyncKernelClient
            from jupyter_server.utils import url_path_join
            from tornado.escape import url_escape

            gw = type(gateway).instance()
            url = url_path_join(gw.ws_url or "", gw.kernels_endpoint, url_escape(self.kernel_id), "channels")
            ssl = {"ca_certs": gw.ca_certs, "certfile": gw.client_cert, "keyfile": gw.client_key}
            headers = [f"{k}: {v}" for k, v in _auth_headers(gw).items()]
            self.channel_socket = websocket.create_connection(
                url, timeout=gw.KERNEL_LAUNCH_TIMEOUT, enable_multithread=True, sslopt=ssl, header=headers
            )
            AsyncKernelClient.start_channels(self, shell=shell, iopub=iopub, stdin=stdin, hb=hb, control=control)
            self.response_router = threading.Thread(target=self._route_responses, daemon=True)
            self.response_router.start()

    class _Manager(manager):
        async def start_kernel(self, **kw: Any) -> None:
            kw.setdefault("kernel_name", self.kernel_name)
            await super().start_kernel(**kw)

        async def _async_is_alive(self) -> bool:
            """jupyter_client asks this (``wait_for_ready`` after a restart); the gateway manager answers
            ``is_alive`` over REST (its base class's version looks for a local process)."""
            return bool(await self.is_alive())

        def client(self, **kwargs: Any) -> Any:
            kw: dict[str, Any] = {**self.get_connection_info(session=True), "parent": self}
            kw.update(connection_file=self.connection_file, kernel_id=self.kernel_id, **kwargs)
            return _Client(**kw)

    _CLASSES[0] = _Manager
    return _Manager


def _auth_headers(gateway: Any) -> dict[str, str]:
    """The headers jupyter_server's gateway client sends on its REST calls (the auth header among them)."""
    import json

    headers = json.loads(gateway.headers or "{}")
    if gateway.auth_token and gateway.auth_header_key not in headers:
        headers[gateway.auth_header_key] = f"{gateway.auth_scheme} {gateway.auth_token}".strip()
    return headers
