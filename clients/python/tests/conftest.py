"""Fixtures: a live Cairn started for the test session, clients for it, and a fake chat model.

The server is `node bin/cairn.js start` from the repository root with its data in a temporary
directory, a headless Temporal dev server on a free port (TEMPORAL_PORT=0) and LOG_LEVEL=warn.
Set CAIRN_TEST_BASE_URL and CAIRN_TEST_API_KEY to run the suite against a server already running.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

import pytest
import requests

from cairn import Client
from support import free_port, unique

REPO_ROOT = Path(__file__).resolve().parents[3]
TESTS_DIR = Path(__file__).resolve().parent
START_TIMEOUT_S = 90

sys.path.insert(0, str(TESTS_DIR))  # the `files` and `support` helpers


# ---------------------------------------------------------------------- helpers
def _tail(path: Path, limit: int = 4000) -> str:
    try:
        return path.read_text(errors="replace")[-limit:]
    except OSError:
        return "(no output)"


def _stop(proc: subprocess.Popen, grace_s: float = 30) -> None:
    """SIGINT (Cairn stops its worker and Temporal child), then SIGKILL; both only for this process group."""
    if proc.poll() is None:
        try:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
    try:  # the group was created for this process; whatever of it is left (e.g. Temporal) goes too
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


@dataclass
class CairnServer:
    base_url: str
    api_key: str
    data_dir: Path | None = None
    log_path: Path | None = None


@dataclass
class Account:
    """A registered user with an API key: its own workspace (tenant)."""

    email: str
    user_id: str
    tenant_id: str
    api_key: str
    client: Client


# ---------------------------------------------------------------------- the server
@pytest.fixture(scope="session")
def cairn_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CairnServer]:
    if os.environ.get("CAIRN_TEST_BASE_URL"):
        yield CairnServer(os.environ["CAIRN_TEST_BASE_URL"].rstrip("/"), os.environ["CAIRN_TEST_API_KEY"])
        return
    # A free port can be taken by someone else before Cairn binds it: then start again on another one.
    for attempt in range(3):
        data_dir = tmp_path_factory.mktemp("cairn-data")
        proc, base_url, log_path = _start_cairn(data_dir)
        try:
            key_file = data_dir / "admin-api-key"
            _wait_healthy(proc, base_url, key_file, log_path)
        except PortTaken:
            _stop(proc)
            continue
        except BaseException:
            _stop(proc)
            raise
        try:
            yield CairnServer(base_url, key_file.read_text().strip(), data_dir, log_path)
        finally:
            _stop(proc)
        return
    raise RuntimeError("Cairn could not bind a free port in 3 attempts")


class PortTaken(RuntimeError):
    pass


def _start_cairn(data_dir: Path) -> tuple[subprocess.Popen, str, Path]:
    log_path = data_dir / "cairn.log"
    port = free_port()
    env = {
        **os.environ,
        "CAIRN_DATA_DIR": str(data_dir),
        "HOST": "127.0.0.1",
        "PORT": str(port),
        "TEMPORAL_PORT": "0",
        "TEMPORAL_UI_PORT": "0",
        "LOG_LEVEL": "warn",
        # The fake model servers listen on loopback ports: a single-user install allows private addresses
        # the same way (docs/input-limits.md, outbound addresses).
        "CAIRN_ALLOW_PRIVATE_URLS": "true",
    }
    env.pop("TEMPORAL_ADDRESS", None)
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            ["node", "bin/cairn.js", "start"], cwd=REPO_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True,
        )
    return proc, f"http://127.0.0.1:{port}", log_path


def _wait_healthy(proc: subprocess.Popen, base_url: str, key_file: Path, log_path: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        if proc.poll() is not None:
            tail = _tail(log_path)
            if "EADDRINUSE" in tail:
                raise PortTaken(tail)
            raise RuntimeError(f"Cairn exited with code {proc.returncode} before it was healthy:\n{tail}")
        try:
            healthy = requests.get(f"{base_url}/api/v1/system/healthz", timeout=2).status_code == 200
        except requests.RequestException:
            healthy = False
        if healthy and key_file.exists() and key_file.read_text().strip():
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"Cairn was not healthy within {START_TIMEOUT_S} s:\n{_tail(log_path)}")
        time.sleep(0.25)


@pytest.fixture(scope="session")
def client(cairn_server: CairnServer) -> Client:
    """The admin's client."""
    return Client(api_key=cairn_server.api_key, base_url=cairn_server.base_url, timeout=120)


@pytest.fixture(scope="session")
def new_account(cairn_server: CairnServer) -> Callable[[], Account]:
    """Registers a new user (own workspace) and returns it with an API key and a client."""

    def make() -> Account:
        api = f"{cairn_server.base_url}/api/v1"
        email = f"{unique('user')}@example.com"
        password = uuid.uuid4().hex
        # Sign-up answers with the console token, as RAGFlow's register does. No log-in: the fuzz test's
        # failed log-ins may have this client's address waiting out its back-off (docs/security.md).
        r = requests.post(f"{api}/users", json={"email": email, "nickname": "tester", "password": password}, timeout=30)
        assert r.status_code == 200, r.text
        jwt = r.headers["Authorization"]
        r = requests.post(f"{api}/system/tokens", headers={"Authorization": f"Bearer {jwt}"}, timeout=30)
        assert r.status_code == 200, r.text
        api_key = r.json()["data"]["token"]
        me = requests.get(f"{api}/users/me", headers={"Authorization": f"Bearer {api_key}"}, timeout=30).json()["data"]
        return Account(email, me["id"], me["tenant_id"], api_key, Client(api_key, cairn_server.base_url, timeout=120))

    return make


@pytest.fixture
def fresh_client(new_account: Callable[[], Account]) -> Client:
    """A client of a user who owns nothing yet (for counts, ordering and delete_all)."""
    return new_account().client


@pytest.fixture
def dataset(client: Client):
    """A new, empty dataset of the admin, deleted afterwards."""
    ds = client.create_dataset(name=unique("ds"))
    yield ds
    try:
        client.delete_datasets(ids=[ds.id])
    except Exception:
        pass


# ---------------------------------------------------------------------- the fake chat model
@dataclass
class FakeLLM:
    """An OpenAI-compatible fake (test/fakes/openai.ts) answering `Echo: <last user message>`.

    ``calls`` records the messages of every chat request it answered, read from the fake's output by a
    thread: ``settled_calls()`` returns them once every request answered so far is among them. ``script(needle, answer)`` makes
    every later chat request whose messages contain ``needle`` answer ``answer`` instead (per test: use a
    unique needle, e.g. a word of the test's own input); ``unscript(needle)`` removes it.
    """

    url: str
    base_url: str
    proc: subprocess.Popen
    calls: list[dict] = field(default_factory=list)
    _acks: set = field(default_factory=set)
    _acked: threading.Condition = field(default_factory=threading.Condition)
    _next_id: int = 0

    def wait_for_call(self, needle: str, timeout: float = 10) -> list[dict]:
        """The messages of the first chat request that contains ``needle`` anywhere in its messages."""
        deadline = time.monotonic() + timeout
        while True:
            for call in list(self.calls):
                if any(needle in str(m.get("content", "")) for m in call["messages"]):
                    return call["messages"]
            if time.monotonic() > deadline:
                raise AssertionError(f"the chat model never received a request containing {needle!r}")
            time.sleep(0.05)

    def settled_calls(self) -> list[dict]:
        """``calls``, including every chat request the fake answered before this call (its acknowledgement
        follows their lines on the fake's output)."""
        self._command("sync", {})
        return list(self.calls)

    def script(self, needle: str, answer: str) -> None:
        """Requests containing ``needle`` answer ``answer`` from now on (returns once the fake has it)."""
        self._command("script", {"needle": needle, "answer": answer})

    def unscript(self, needle: str) -> None:
        self._command("unscript", {"needle": needle})

    def _command(self, kind: str, args: dict, timeout: float = 10) -> None:
        with self._acked:
            self._next_id += 1
            command_id = self._next_id
            self.proc.stdin.write(json.dumps({kind: {"id": command_id, **args}}) + "\n")
            self.proc.stdin.flush()
            if not self._acked.wait_for(lambda: command_id in self._acks, timeout=timeout):
                raise AssertionError(f"the fake chat model did not acknowledge {kind} {args!r}")

    def _ack(self, command_id: int) -> None:
        with self._acked:
            self._acks.add(command_id)
            self._acked.notify_all()


@pytest.fixture(scope="session")
def fake_llm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FakeLLM]:
    log_path = tmp_path_factory.mktemp("fake-llm") / "stderr.log"
    with open(log_path, "wb") as err:
        proc = subprocess.Popen(
            ["node", str(TESTS_DIR / "fake_llm.mjs")], cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=err,
            stdin=subprocess.PIPE, start_new_session=True, text=True,
        )
    try:
        first = proc.stdout.readline()
        if not first:
            raise RuntimeError(f"the fake chat model did not start:\n{_tail(log_path)}")
        info = json.loads(first)
        fake = FakeLLM(info["url"], info["base_url"], proc)

        def pump() -> None:
            for line in proc.stdout:
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                if "chat" in record:
                    fake.calls.append(record["chat"])
                elif "ack" in record:
                    fake._ack(record["ack"])

        threading.Thread(target=pump, daemon=True).start()
        yield fake
    finally:
        _stop(proc, grace_s=5)


FAKE_FACTORY = "OpenAI-API-Compatible"
FAKE_CHAT_MODEL = "fake-chat"
FAKE_EMBEDDING_MODEL = "fake-embed"


@dataclass
class FakeModels:
    llm_id: str
    embedding_model: str


def configure_fake_models(client: Client, fake: FakeLLM) -> FakeModels:
    """Adds the fake as an OpenAI-compatible provider of the client's workspace, with one chat and
    one embedding model, and makes its chat model the workspace's default chat model; returns the
    models' ids in the spec's `model_name@model_factory` form."""
    body = {
        "instance_name": unique("fake"),
        "api_key": "fake-key",
        "base_url": fake.base_url,
        "model_info": [
            {"model_name": FAKE_CHAT_MODEL, "model_type": ["chat"], "max_tokens": 8192},
            {"model_name": FAKE_EMBEDDING_MODEL, "model_type": ["embedding"], "max_tokens": 8192},
        ],
    }
    res = client.post(f"/providers/{FAKE_FACTORY}/instances", json=body)
    assert res.status_code == 200 and res.json().get("code") == 0, f"{res.status_code} {res.text}"
    models = FakeModels(f"{FAKE_CHAT_MODEL}@{FAKE_FACTORY}", f"{FAKE_EMBEDDING_MODEL}@{FAKE_FACTORY}")
    res = client.patch("/models/default", json={"model_type": "chat", "model_id": models.llm_id})
    assert res.status_code == 200 and res.json().get("code") == 0, f"{res.status_code} {res.text}"
    return models


@pytest.fixture(scope="session")
def fake_models(client: Client, fake_llm: FakeLLM) -> FakeModels:
    """The fake's models, configured in the admin's workspace."""
    return configure_fake_models(client, fake_llm)


@pytest.fixture(scope="session")
def llm_id(fake_models: FakeModels) -> str:
    """The admin's chat model (the fake): `fake-chat@OpenAI-API-Compatible`."""
    return fake_models.llm_id


@pytest.fixture(scope="session")
def setup_fake_models(fake_llm: FakeLLM) -> Callable[[Client], FakeModels]:
    """Configures the fake's models (default chat model included) in the given client's workspace."""
    return lambda c: configure_fake_models(c, fake_llm)
